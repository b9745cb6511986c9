"""``protolens testbed``: the network lab (namespaces, caddy, shaper). See docs/TESTBED.md."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from protolens.cli.errors import UserError
from protolens.cli.extras import extra_for, needs_extra
from protolens.cli.output import emit, output_options

F = TypeVar("F", bound=Callable[..., Any])
_PAGES = {"pages": "pages_cmd", "page": "page_cmd"}
"""The page-corpus commands (``cli/testbed_pages.py``), imported only when one of them runs: the
corpus takes about 60 ms to import (python -X importtime), which every other testbed command
would pay."""


class _Group(click.Group):
    """The testbed commands, and the page-corpus commands loaded when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_PAGES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _PAGES:
            return super().get_command(ctx, cmd_name)
        try:
            module = importlib.import_module("protolens.cli.testbed_pages")
        except ModuleNotFoundError as exc:  # a library of the lab extra is not installed
            extra = extra_for("testbed", exc.name or "")
            if extra is None:  # not an install choice: a real error, said as it is
                raise
            return needs_extra(f"protolens testbed {cmd_name}", extra)
        cmd: click.Command = getattr(module, _PAGES[cmd_name])
        return cmd


def _name_option(func: F) -> F:
    return click.option("--name", default="pl", show_default=True,
                        help="Testbed name (prefix of its namespaces).")(func)


def _guard(fn: Callable[[], Any]) -> Any:
    from protolens.shaper import ProfileError
    from protolens.testbed import TestbedError

    if os.geteuid() != 0:
        raise UserError("the testbed needs root (network namespaces, NFQUEUE)")
    try:
        return fn()
    except (TestbedError, ProfileError) as e:
        raise UserError(str(e)) from None


@click.group(cls=_Group)
def testbed() -> None:
    """The network lab: client/router/server namespaces, caddy (h1, h2, h3) and the shaper.

    Example: protolens testbed up --profile wifi-lossy --server-cc cubic
    """


@testbed.command()
@_name_option
@click.option("--profile", default="clean", show_default=True,
              help="Profile name (protolens testbed profiles) or a .toml file.")
@click.option("--server-cc", type=click.Choice(["cubic", "cubic-nohystart", "bbr", "reno"]),
              default="cubic", show_default=True, help="Server TCP congestion control.")
@click.option("--initcwnd", type=int, default=None, help="Server initial congestion window.")
@click.option("--bbr-host", "bbr_hosts", multiple=True, metavar="HOST",
              help="Serve HOST from a second server address whose TCP connections use BBR "
                   "(repeatable; CoNEXT'20 HTTPX).")
@click.option("--site", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory caddy serves (default: <data home>/pages).")
@output_options
def up(name: str, profile: str, server_cc: str, initcwnd: int | None,
       bbr_hosts: tuple[str, ...], site: Path | None, fmt: str) -> None:
    """Create the testbed and start caddy and the shaper.

    Example: protolens testbed up --profile wifi --server-cc cubic --initcwnd 10
    (or --bbr-host b.test: b.test behind BBR, every other host behind --server-cc)
    """
    from protolens.testbed import Testbed

    tb = _guard(lambda: Testbed.up(name=name, profile=profile, server_cc=server_cc,
                                   initcwnd=initcwnd, site=site, bbr_hosts=bbr_hosts))
    for line in tb.reaped:
        click.echo(line, err=True)
    _emit_status(tb.status(), fmt)


@testbed.command()
def build() -> None:
    """Compile the shaper helper from the packaged C sources into your data directory.

    The explicit build step for an installed package (a source checkout runs scripts/setup.sh);
    needs gcc, make, pkg-config and libnetfilter-queue-dev. `testbed up` never compiles.

    Example: protolens testbed build
    """
    from protolens.shaper.build import ShaperError
    from protolens.shaper.build import build as build_helper

    try:
        binary = build_helper()
    except ShaperError as e:
        raise UserError(str(e)) from None
    click.echo(f"built {binary}")


@testbed.command()
@_name_option
def down(name: str) -> None:
    """Remove everything the testbed created (also after a crash); safe to repeat.

    Example: protolens testbed down --name pl
    """
    from protolens.testbed import Testbed

    for line in _guard(lambda: Testbed.down(name)):
        click.echo(line)


@testbed.command()
@_name_option
@output_options
def status(name: str, fmt: str) -> None:
    """What is up: namespaces, hosts, server IP, SPKI, profile, shaper and caddy state.

    Example: protolens testbed status --json
    """
    from protolens.testbed import Testbed

    st = _guard(lambda: Testbed.load(name).status())
    _emit_status(st, fmt)
    if st["problems"]:
        raise UserError("; ".join(st["problems"]))


def _emit_status(st: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        emit(st, fmt)
        return
    flat = {k: v for k, v in st.items() if k not in ("shaper", "caddy", "chromium_flags")}
    flat["caddy"] = "running" if st["caddy"]["running"] else "NOT RUNNING"
    sh = st["shaper"]
    lat = sh.get("lateness", {})
    flat["shaper"] = (f"running, lateness p99 {lat.get('p99_ns', 0) / 1e3:.0f} us, max "
                      f"{lat.get('max_ns', 0) / 1e3:.0f} us" if sh["running"] else "NOT RUNNING")
    cal = st.get("calibration")
    flat.pop("calibrated", None)
    flat["calibration"] = "none" if not cal else ", ".join(
        f"path RTT {p['path_rtt_ns'] / 1e3:.0f} us at {p['rtt_ns'] / 1e6:g} ms"
        for p in cal["probes"]) + (" (taken off the delay)" if st.get("calibrated") else
                                   " (not applied)")
    rows = [{"key": k, "value": v} for k, v in flat.items()]
    emit(rows, fmt, title=f"testbed {st['name']}", columns=["key", "value"])


@testbed.command(name="exec", context_settings={"ignore_unknown_options": True})
@_name_option
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_(name: str, cmd: tuple[str, ...]) -> None:
    """Run a command in the client namespace.

    Example: protolens testbed exec -- curl -k --resolve a.test:443:198.18.2.2 https://a.test/
    """
    from protolens.testbed import Testbed

    argv = _guard(lambda: Testbed.load(name).exec_argv(list(cmd)))
    os.execvp(argv[0], argv)


@testbed.command()
@_name_option
def flush(name: str) -> None:
    """Flush cached TCP metrics in the client and server namespaces (between loads).

    Example: protolens testbed flush
    """
    from protolens.testbed import Testbed

    _guard(lambda: Testbed.load(name).flush_tcp_metrics())
    click.echo("flushed tcp_metrics in client and server namespaces")


@testbed.command()
@_name_option
@click.option("--reset", is_flag=True, help="Zero the counters after reading them.")
@output_options
def truth(name: str, reset: bool, fmt: str) -> None:
    """Per-flow packets and bytes seen by the shaper (the ground truth), each direction.

    Example: protolens testbed truth --json --reset
    """
    from protolens.testbed import Testbed

    rows = _guard(lambda: Testbed.load(name).truth(reset=reset))
    emit(rows, fmt, title="flows", columns=[
        "proto", "client_port", "server_port", "bytes_down", "bytes_up", "packets_down",
        "packets_up", "drops_down", "drops_up", "path", "first_ns", "last_ns"])


@testbed.command()
@_name_option
@click.argument("profile", required=False)
@click.option("--trace-down", type=click.Path(dir_okay=False), default=None,
              help="Mahimahi trace (one line per 1500-byte delivery opportunity, in ms, looped) "
                   "for server -> client; replaces the profile's rate.")
@click.option("--trace-up", type=click.Path(dir_okay=False), default=None,
              help="Mahimahi trace for client -> server.")
def shape(name: str, profile: str | None, trace_down: str | None, trace_up: str | None) -> None:
    """Switch the shaper to another profile now (restarts the shaper if it is not running).

    With --trace-down / --trace-up the link delivers packets only at the trace's opportunities,
    with the profile's delay, loss and buffer (PROFILE defaults to the one in use).

    Example: protolens testbed shape cell-poor
    (or: protolens testbed shape wifi --trace-down Verizon-LTE-driving.down)
    """
    from protolens.shaper.catalogue import load_profile, with_traces
    from protolens.testbed import Testbed

    if profile is None and trace_down is None and trace_up is None:
        raise UserError("give a PROFILE, --trace-down FILE or --trace-up FILE")

    def apply() -> Any:
        tb = Testbed.load(name)
        base = load_profile(profile or tb.state.profile_path or tb.state.profile)
        return tb.shape(with_traces(base, down=trace_down, up=trace_up))

    prof = _guard(apply)
    traces = [f"{d} trace {t.source} ({t.rate_bps / 1e6:.3g} Mbit/s mean)"
              for d, t in (("down", prof.link.trace_down), ("up", prof.link.trace_up)) if t]
    click.echo(f"shaping with {prof.name}" + (f", {', '.join(traces)}" if traces else ""))


@testbed.command()
@output_options
def profiles(fmt: str) -> None:
    """List the built-in profiles with their parameters and sources.

    Example: protolens testbed profiles --json
    """
    from protolens.shaper import ProfileError, builtin_names, load_profile
    from protolens.shaper.summary import summarize

    try:
        rows = [summarize(load_profile(n)) for n in builtin_names()]
    except ProfileError as e:
        raise UserError(str(e)) from None
    if fmt == "table":  # the full parameters and sources are in --json / --csv
        rows = [{**r, "schedule": (r["schedule"] or {}).get("kind")} for r in rows]
        cols = ["name", "rate_down_mbit", "rtt_ms", "buffer_bytes", "loss_down", "schedule",
                "description"]
    else:
        cols = ["name", "rate_down_mbit", "rate_up_mbit", "rtt_ms", "buffer_bytes", "loss_down",
                "loss_up", "jitter_ms", "schedule", "ecmp", "description", "source"]
    emit(rows, fmt, title="profiles", columns=cols)


@testbed.command()
@_name_option
@click.option("--duration", type=float, required=True, help="Seconds to sample.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSON lines file to write.")
@click.option("--interval", type=float, default=0.01, show_default=True, help="Seconds.")
def tcpstats(name: str, duration: float, out: Path, interval: float) -> None:
    """Sample the server's TCP connections (ss -tin: cwnd, rtt, retransmits, delivery rate).

    Example: protolens testbed tcpstats --duration 10 --out cwnd.jsonl
    """
    from protolens.testbed import Testbed
    from protolens.testbed.tcpstats import sample

    if duration <= 0 or interval <= 0:
        raise UserError("--duration and --interval must be positive")
    n = _guard(lambda: sample(Testbed.load(name), duration, out, interval))
    click.echo(json.dumps({"samples": n, "out": str(out)}))
