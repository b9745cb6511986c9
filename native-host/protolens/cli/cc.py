"""``protolens cc probe|list|wan``: the server congestion-control fingerprint (CoNEXT'20's Igor).
The work is ``protolens.cc.survey`` (targets, probes, storing) and ``lab.campaign.load_page``;
this module parses, shows progress and prints."""

from __future__ import annotations

import os
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from protolens.cc.curl import ProbeError
from protolens.cc.probe import ProbeResult
from protolens.cc.survey import StoreProbeError, check_urls, page_targets, probe_urls
from protolens.cli.db import connect_ro, db_option, db_path, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.paths import extension_dir
from protolens.store import DatabaseError, StoreError
from protolens.store import cc as ccstore
from protolens.store.queries import NotFound
from protolens.testbed import Testbed, TestbedError

TABLE = ("host", "server_ip", "label", "max_queue_pct", "time_to_max_s", "first_loss_s",
         "bytes", "mss", "rtt_ms", "url")


@click.group("cc")
def cc_group() -> None:
    """Which servers run delay-based congestion control (CoNEXT'20's Igor).

    Example: protolens cc probe https://a.test/_testbed/320k.bin
    """


def _display(row: dict[str, Any]) -> dict[str, Any]:
    ms = row.get("time_to_max_ms")
    loss = row.get("first_loss_ms")
    return {**row, "max_queue_pct": round(100 * row["max_queue_fraction"]),
            "time_to_max_s": None if ms is None else round(ms / 1000, 2),
            "first_loss_s": None if loss is None else round(loss / 1000, 2)}


def _path(testbed: str, wan: bool) -> Any:
    try:
        if wan:
            from protolens.cc.paths import WanPath
            from protolens.testbed.wan import WanNetwork
            return WanPath(WanNetwork.load(testbed))
        from protolens.cc.paths import LabPath
        tb = Testbed.load(testbed)
        tb.check()
        return LabPath(tb)
    except TestbedError as exc:
        raise UserError(str(exc)) from None


@cc_group.command("probe")
@click.argument("urls", nargs=-1, metavar="[URL ...]")
@click.option("--page", "page", metavar="NAVIGATION_ID",
              help="Probe the hosts of a recorded navigation (their biggest objects).")
@click.option("--url", "page_url", metavar="PAGE_URL",
              help="Load this page first (lab Chromium over your own network, stored as a "
                   "campaign), then probe its hosts as with --page.")
@click.option("--top", default=5, show_default=True, type=click.IntRange(1, 100),
              help="With --page: probe the N hosts that carry the most bytes.")
@click.option("--http", type=click.Choice(["1.1", "2"]), default="1.1", show_default=True,
              help="HTTP version of the fetch (always over TCP).")
@click.option("--packet-bytes", type=click.IntRange(88, 1500),
              help="Force the packet size (default: Igor's rule: 500, 100 under 100 KB, 1500 "
                   "over 1 MB).")
@click.option("--testbed", "testbed", default="pl", show_default=True,
              help="The lab network to probe through (protolens testbed up).")
@click.option("--wan", is_flag=True,
              help="Probe real sites through the wan variant of the lab network "
                   "(protolens cc wan up).")
@click.option("--no-store", is_flag=True, help="Print only; do not store the results.")
@db_option
@output_options
def probe_cmd(urls: tuple[str, ...], page: str | None, top: int, http: str,
              packet_bytes: int | None, testbed: str, wan: bool, no_store: bool,
              db: Path | None, fmt: str, page_url: str | None = None) -> None:
    """Fingerprint the server of each URL's object: loss-based, delay-based, too-small-to-judge
    or inconclusive, with the evidence (queue peak and when, first loss, bytes, MSS, RTT).

    Example: protolens cc probe --page 3f2a9c1e --top 3 --json
    """
    if sum(map(bool, (urls, page, page_url))) != 1:
        raise UserError("give URLs, --page NAVIGATION_ID or --url PAGE_URL (one of them)")
    store = db_path(db)
    try:
        if page_url:
            check_urls([page_url])
            page = _load_page(store, page_url)
        todo = list(urls) if urls else page_targets(store, str(page), top)
        check_urls(todo)
    except (ProbeError, NotFound, StoreError) as exc:
        raise UserError(str(exc)) from None
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    results, failed = _probe_with_bar(_path(testbed, wan), todo, http=http,
                                      packet_bytes=packet_bytes, db=None if no_store else store,
                                      network="wan" if wan else "lab")
    rows = [_display(r.row()) for r in results]
    if rows or fmt != "table":
        emit(rows, fmt, title="Congestion-control fingerprint",
             columns=TABLE if fmt == "table" else None)
    if fmt == "table":
        for r in rows:
            click.echo(f"{r['host']}: {r['label']}: {r['reason']}")
    if failed:
        raise SystemExit(1)


def _probe_with_bar(path: Any, todo: list[str], *, http: str, packet_bytes: int | None,
                    db: Path | None, network: str) -> tuple[list[ProbeResult], list[str]]:
    """``probe_urls`` with a progress bar on stderr, each failure printed as it comes; the
    results and the URLs that failed."""
    failed: list[str] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total}"), TimeElapsedColumn(), console=Console(stderr=True),
                  transient=True) as bar:
        task = bar.add_task("probing", total=len(todo))

        def starting(url: str) -> None:
            bar.update(task, description=f"probing {url[:60]}")

        def done(url: str, res: ProbeResult | None, error: str | None) -> None:
            if error is not None:
                bar.console.print(f"error: {url}: {error}", markup=False, highlight=False,
                                  soft_wrap=True)
                failed.append(url)
            bar.advance(task)

        try:
            results = probe_urls(path, todo, http=http, packet_bytes=packet_bytes, db=db,
                                 network=network, starting=starting, done=done)
        except StoreProbeError as exc:
            raise UserError(str(exc)) from None
    return results, failed


def _load_page(db: Path, url: str) -> str:
    """Load ``url`` once in the lab Chromium (``lab run --urls``); its navigation's id."""
    from protolens.lab import campaign as camp
    settings = camp.Settings(db=db, chromium="/usr/bin/chromium",
                             extension=extension_dir(os.environ))
    try:
        nav = camp.load_page(url, settings, time.strftime("cc-page-%Y%m%d-%H%M%S"))
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None
    if nav is None:
        raise UserError(f"loading {url} failed: nothing recorded (protolens lab campaigns)")
    return nav


@cc_group.command("list")
@click.option("--host", help="Only this host.")
@click.option("--last", default=50, show_default=True, type=click.IntRange(1, 100_000))
@db_option
@output_options
def list_cmd(host: str | None, last: int, db: Path | None, fmt: str) -> None:
    """Stored probes, newest first.

    Example: protolens cc list --host a.test --csv
    """
    conn = connect_ro(db)
    try:
        with closing(conn):
            if not ccstore.has_cc_table(conn):
                rows: list[dict[str, Any]] = []
            else:
                rows = ccstore.list_probes(conn, host, last)
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    shown = [_display(r) for r in rows]
    emit(shown, fmt, title="Stored CC probes",
         columns=("probed_at_ms", *TABLE, "network", "server_cc") if fmt == "table" else None)


@cc_group.group("wan")
def wan_group() -> None:
    """The wan variant of the lab network: a client namespace behind the shaper, NATed out of
    the machine's default route, for probing real sites (root).

    Example: protolens cc wan up && protolens cc probe --wan https://example.org/big.js
    """


@wan_group.command("up")
@click.option("--name", default="pl", show_default=True, help="Network name (namespaces).")
@click.option("--uplink", metavar="IF", help="Interface to NAT out of (default: the default "
              "route's).")
@click.option("--resolver", "resolvers", multiple=True, metavar="IP",
              help="Name server the client namespace asks (repeatable; default: the host's, "
                   "or the servers behind a systemd-resolved stub).")
def wan_up(name: str, uplink: str | None, resolvers: tuple[str, ...] = ()) -> None:
    """Create the wan network.

    Example: protolens cc wan up --name pl
    """
    from protolens.testbed.wan import WanNetwork
    try:
        wn = WanNetwork.up(name, uplink, resolvers=resolvers)
    except TestbedError as exc:
        raise UserError(str(exc)) from None
    for line in wn.reaped:
        click.echo(line, err=True)
    names = ", ".join(wn.state.resolvers) or "none reachable (give --resolver IP)"
    click.echo(f"wan network '{name}' up: client {wn.topo.cli_ns}, NAT out of "
               f"{wn.state.uplink}, name servers {names}")


@wan_group.command("down")
@click.option("--name", default="pl", show_default=True)
def wan_down(name: str) -> None:
    """Remove the wan network and everything it added; idempotent.

    Example: protolens cc wan down
    """
    from protolens.testbed.wan import WanNetwork
    for line in WanNetwork.down(name):
        click.echo(line)
