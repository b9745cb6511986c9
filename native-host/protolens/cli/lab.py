"""``protolens lab run|reproduce|campaigns`` and ``protolens report``: lab campaigns. The runs are
``lab.campaign``'s; this module parses and prints."""

from __future__ import annotations

import os
import random
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import click

from protolens.arms import Arm
from protolens.cli.db import db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.fairness import fairness_cmd
from protolens.cli.output import emit, output_options
from protolens.cli.reproduce import reproduce_cmd
from protolens.lab import campaign as camp
from protolens.lab import real_sites
from protolens.lab.path_rtt import by_cell, path_table
from protolens.lab.report import report_rows
from protolens.lab.runner import LAB_QUIET_MS
from protolens.messaging.lab import MAX_QUIET_MS
from protolens.paths import default_db, extension_dir
from protolens.store import StoreError, open_ro
from protolens.store import lab as labstore
from protolens.store import paths as pathstore


def _csv(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


@click.group("lab")
def lab_group() -> None:
    """Lab campaigns: real Chromium with the extension, on the testbed or real sites.

    Example: protolens lab run --pages ifip18-wikipedia --arms h1,h2,h3 --conditions wifi --reps 3
    """


lab_group.add_command(reproduce_cmd)
lab_group.add_command(fairness_cmd)


@lab_group.command("run")
@click.argument("url_args", metavar="[URL]...", nargs=-1)
@click.option("--pages", help="Corpus pages, comma-separated (see: protolens testbed pages).")
@click.option("--urls", "urls_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file of real URLs, one per line (or give URLs as arguments): with "
                   "--conditions none over your own network, with shaper profiles through the "
                   "shaper on the wan path (root).")
@click.option("--arms", default="h1,h2,h3", show_default=True,
              help="Protocol arms: h1, h2, h3; through the lab proxy: h2-parallel:N (N 1-8), "
                   "proxy-h1, proxy-h2, proxy-h3, policy (with --policy).")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Per-domain rules (TOML, docs/POLICY.md) for the 'policy' arm, which is "
                   "added to --arms if missing.")
@click.option("--conditions", default="wifi", show_default=True,
              help="Network conditions (shaper profiles, also for real sites); 'none': real "
                   "sites over your own network, unshaped.")
@click.option("--reps", default=3, show_default=True, type=click.IntRange(1, 1000))
@click.option("--campaign", help="Campaign name (default: lab-<date>-<time>).")
@click.option("--resume", "resume", metavar="CAMPAIGN", help="Run only what CAMPAIGN is missing.")
@click.option("--server-cc", default="cubic", show_default=True,
              type=click.Choice(["cubic", "cubic-nohystart", "bbr", "reno"]),
              help="The testbed server's TCP congestion control (TCP only; h3 uses quic-go's).")
@click.option("--bbr-host", "bbr_hosts", multiple=True, metavar="HOST",
              help="Serve this testbed host over BBR, the others over --server-cc "
                   "(repeatable; protolens testbed up --bbr-host).")
@click.option("--seed", type=int, help="Order seed (default: random, recorded).")
@click.option("--quiet-ms", type=click.IntRange(0, MAX_QUIET_MS),
              help=f"Network quiet after load that ends each record, ms (default: {LAB_QUIET_MS} "
                   "on the testbed, the recorder's 2000 with --urls; recorded).")
@click.option("--warm", is_flag=True, help="Also load each page a second time, warm.")
@click.option("--retries", default=1, show_default=True, type=click.IntRange(0, 10))
@click.option("--timeout", "timeout_s", default=60.0, show_default=True,
              help="Seconds per load before it is recorded as failed.")
@click.option("--chromium", default="/usr/bin/chromium", show_default=True)
@click.option("--visual/--no-visual", default=True, show_default=True,
              help="Capture paint progress: first/last visual change, SpeedIndex, visually "
                   "complete 85/99 per load (docs/RECORD.md).")
@click.option("--overlap/--no-overlap", default=None,
              help="Start the next load's browser while a page's quiet after load runs, so "
                   "that browser start-up is off the campaign's clock (default: on for testbed "
                   "pages, off with --urls).")
@click.option("--save-log", is_flag=True,
              help="Keep each load's raw DevTools events (gzipped) beside its record, for "
                   "protolens replay --navigation ID; never exported.")
@click.option("--testbed", "testbed_name", default="pl", show_default=True,
              help="Testbed name (namespace prefix).")
@click.option("--wan", "wan_name", default="plw", show_default=True,
              help="Real sites under a profile: the wan network's name (brought up and down "
                   "here unless it is up: protolens cc wan up).")
@click.option("--uplink", metavar="IF",
              help="Real sites: the interface the wan path NATs out of (default: the default "
                   "route's).")
@click.option("--resolver", "resolvers", multiple=True, metavar="IP",
              help="Real sites: a name server the wan path's namespace asks (repeatable; "
                   "default: the host's).")
@click.option("--ca", "ca_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Real sites: also trust this CA (PEM), e.g. a staging server's.")
@db_option
def run_cmd(pages: str | None, urls_file: Path | None, arms: str, conditions: str, reps: int,
            campaign: str | None, resume: str | None, server_cc: str, seed: int | None,
            warm: bool, retries: int, timeout_s: float, chromium: str, testbed_name: str,
            db: Path | None, policy_file: Path | None = None,
            bbr_hosts: tuple[str, ...] = (), quiet_ms: int | None = None,
            visual: bool = True, save_log: bool = False, url_args: tuple[str, ...] = (),
            wan_name: str = "plw", uplink: str | None = None, resolvers: tuple[str, ...] = (),
            ca_file: Path | None = None, overlap: bool | None = None) -> None:
    """Load pages under every arm x condition x repetition; store every load.

    Example: protolens lab run --pages student-small,mininet-10 --arms h1,h2,h3
    --conditions wifi,wifi-lossy --reps 5 --campaign wifi-test

    Example: protolens lab run https://example.org/ --arms h1,h2,h3,h2-parallel:2
    --conditions wifi,wifi-lossy,cell-poor --reps 5
    """
    db = db_path(db)
    if resume:
        try:
            spec = camp.stored_spec(db, resume)
        except (camp.CampaignError, StoreError) as exc:
            raise UserError(str(exc)) from None
    else:
        arm_list, policy = _csv(arms), _policy(policy_file)
        if policy and "policy" not in arm_list:
            arm_list.append("policy")
        urls = _read_urls(urls_file) + _url_args(url_args)
        spec = camp.CampaignSpec(
            name=campaign or time.strftime("lab-%Y%m%d-%H%M%S"),
            pages=tuple(_csv(pages)), urls=urls,
            arms=_arms(arm_list), conditions=tuple(_csv(conditions)), reps=reps, policy=policy,
            seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
            warm=warm, server_cc=server_cc if not urls else None, testbed=testbed_name,
            bbr_hosts=bbr_hosts, quiet_ms=quiet_ms, wan=wan_name, uplink=uplink,
            resolvers=resolvers, ca=str(ca_file.resolve()) if ca_file else None)
    opts = camp.Settings(db=db, chromium=chromium, extension=extension_dir(os.environ),
                         timeout_s=timeout_s, retries=retries, visual=visual,
                         save_log=save_log, overlap=overlap)
    try:
        outcome = camp.run(spec, opts, resume=bool(resume))
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None
    click.echo(outcome.summary())
    for line in _incomplete_lines(db, outcome.campaign):
        click.echo(line)
    if outcome.interrupted:
        raise SystemExit(130)
    if outcome.failed:
        raise SystemExit(1)


def _incomplete_lines(db: Path, campaign: str) -> list[str]:
    """The campaign's cells with incomplete records (docs/RECORD.md "Incomplete records"): a
    load that ran but whose record misses something is said, not counted as fine."""
    try:
        with closing(open_ro(db)) as conn:
            cells = labstore.incomplete_cells(conn, campaign)
    except StoreError:
        return []
    if not cells:
        return []
    total = sum(int(c["incomplete"]) for c in cells)
    lines = [f"incomplete records: {total} (left out of report and compare unless "
             "--include-incomplete)"]
    for c in cells:
        reasons = sorted({r for text in str(c["reasons"] or "").split(",")
                          for r in [text.strip('[]" ')] if r})
        lines.append(f"  {c['page']} / {c['condition']} / {c['arm']}: {c['incomplete']} of "
                     f"{c['navigations']} ({', '.join(reasons) or 'no reason given'})")
    return lines


def _arms(texts: list[str]) -> tuple[Arm, ...]:
    try:
        return camp.parse_arms(texts)
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None


def _policy(path: Path | None) -> tuple[dict[str, Any], ...]:
    if path is None:
        return ()
    from protolens.policy.file import read_policy, to_stored
    from protolens.policy.rules import PolicyError
    try:
        return tuple(to_stored(read_policy(path)))
    except PolicyError as exc:
        raise UserError(str(exc)) from None


def _url_args(args: tuple[str, ...]) -> tuple[str, ...]:
    """URLs given as arguments, checked as a file's are."""
    try:
        return tuple(real_sites.check_url(u, "argument") for u in args)
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None


def _read_urls(path: Path | None) -> tuple[str, ...]:
    """The ``--urls`` file's URLs; its problems are one-line user errors like any other."""
    if path is None:
        return ()
    try:
        return tuple(real_sites.read_urls(path))
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None


@lab_group.command("campaigns")
@output_options
@db_option
def campaigns_cmd(fmt: str, db: Path | None) -> None:
    """List campaigns with their loads: ok, failed, flagged, and incomplete records.

    Example: protolens lab campaigns --json
    """
    try:
        with closing(open_ro(db_path(db))) as conn:
            rows = labstore.campaigns(conn)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    emit(rows, fmt, title="Campaigns")


@click.command("report")
@click.option("--campaign", help="Campaign name (required unless --by-cc).")
@click.option("--warm", is_flag=True, help="Report the warm loads instead of the cold ones.")
@click.option("--by-cc", is_flag=True,
              help="Per page, the share of bytes served by delay-based servers (CoNEXT'20 Fig. "
                   "2(c); labels from protolens cc probe); all navigations unless --campaign.")
@output_options
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", type=click.Path(file_okay=False, path_type=Path),
              help="A collector's data directory instead of --db (DuckDB over its Parquet).")
@click.option("--include-incomplete", is_flag=True,
              help="Keep loads whose record is incomplete (left out by default, and counted).")
def report_cmd(campaign: str | None, warm: bool, fmt: str, db: Path | None,
               by_cc: bool = False, dataset: Path | None = None,
               include_incomplete: bool = False) -> None:
    """Per page x condition x arm: n, median and IQR of PLT, TTFB, FCP, first image and the
    visual metrics (SpeedIndex ...); PLT and SpeedIndex ratio to h2; the profile's RTT and each
    host's path RTT on top of it (real sites add their own).

    Example: protolens report --campaign wifi-test --json
    """
    if by_cc:
        if dataset is not None:
            raise UserError("--by-cc reads the CC labels of the store, not a --dataset")
        from protolens.cli.cc_report import report_by_cc
        report_by_cc(campaign, fmt, db)
        return
    if campaign is None:
        raise UserError("give --campaign NAME (or --by-cc)")
    if dataset is not None:
        from protolens.store import dataset as ds

        try:
            navs = ds.campaign_navigations(dataset, campaign)
        except ds.DatasetError as exc:
            raise UserError(str(exc)) from None
        if not navs:
            raise UserError(f"no campaign named {campaign!r} in {dataset}")
        _emit_report(report_rows(navs, warm=warm, include_incomplete=include_incomplete),
                     campaign, warm, fmt, include_incomplete)
        return
    try:
        with closing(open_ro(db or default_db(os.environ))) as conn:
            if labstore.campaign_spec(conn, campaign) is None:
                raise UserError(f"no campaign named {campaign!r} (see: protolens lab campaigns)")
            rows = report_rows(labstore.campaign_navigations(conn, campaign), warm=warm,
                               include_incomplete=include_incomplete)
            paths = path_table(pathstore.campaign_rtts(conn, campaign)) if not warm else []
    except StoreError as exc:
        raise UserError(str(exc)) from None
    _emit_report(_with_paths(rows, paths), campaign, warm, fmt, include_incomplete)
    if paths and fmt == "table":
        emit(paths, fmt, title="Round trips: the profile's, and each host's path on top of it "
                               "(smallest set-up over the loads)",
             columns=["page", "condition", "host", "profile_rtt_ms", "path_rtt_ms", "loads",
                      "note"])


def _with_paths(rows: list[dict[str, Any]], paths: list[dict[str, Any]]
                ) -> list[dict[str, Any]]:
    """Each report row with its cell's profile RTT and per-host path RTT, where stored."""
    cells = by_cell(paths)
    return [r | cells.get((r["page"], r["condition"]), {}) for r in rows] if cells else rows


def _emit_report(rows: list[dict[str, Any]], campaign: str, warm: bool, fmt: str,
                 include_incomplete: bool) -> None:
    left_out = sum(int(r.get("incomplete") or 0) for r in rows)
    if left_out and fmt == "table":
        click.echo(f"{left_out} incomplete load(s) " + (
            "kept (--include-incomplete)" if include_incomplete else
            "left out (column incomplete; --include-incomplete keeps them)"), err=True)
    if fmt == "table":
        cols = ["page", "condition", "arm", "n", "incomplete", "plt_median_ms", "plt_p25_ms",
                "plt_p75_ms", "plt_ratio_to_h2", "plt_vs_h2", "ttfb_median_ms", "fcp_median_ms",
                "first_image_median_ms", "speed_index_median_ms", "speed_index_ratio_to_h2",
                "connections_per_host"]
        emit(rows, fmt, title=f"Campaign {campaign}" + (" (warm)" if warm else ""), columns=cols)
    else:
        emit(rows, fmt)

