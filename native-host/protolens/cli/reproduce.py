"""``protolens lab reproduce NAME|--all``: rerun the papers' experiments on the testbed and print
each claim beside a measured ratio with its 95% bootstrap interval; ``--all`` (or ``--out``)
writes one Markdown report with tables, figures and verdicts (docs/RESEARCH.md)."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import click

from protolens.cli.db import db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit
from protolens.lab import campaign as camp
from protolens.lab import real_sites
from protolens.lab.experiments import EXPERIMENTS, Experiment, experiment
from protolens.lab.reproduce import RealSites, Reproduction, reproduce
from protolens.paths import extension_dir
from protolens.store import StoreError


def _print(rep: Reproduction) -> None:
    exp = rep.experiment
    for outcome in rep.outcomes:
        click.echo(outcome.summary())
    for suffix, rows in rep.rows.items():
        emit(rows, "table", title=f"{exp.name}: {rep.campaigns[suffix]}",
             columns=None if exp.kind == "fairness" else
             ["page", "condition", "arm", "n", "plt_median_ms", "plt_p25_ms", "plt_p75_ms",
              "plt_ratio_to_h2", "connections_per_host"])
    click.echo(f"\nPaper: {exp.paper}\n  finding: {exp.finding}\nProtoLens measured "
               f"({rep.seconds / 60:.1f} min):")
    for line in rep.lines:
        click.echo(f"  {line}")


def _write_report(reps: list[Reproduction], out: Path) -> None:
    from protolens.lab.markdown import render
    from protolens.plots import figures

    names: dict[str, str] = {}
    for rep in reps:
        navs = [n for part in rep.navigations.values() for n in part]
        try:
            if rep.experiment.kind == "fairness":
                from protolens.plots.fairness import fairness
                fig = fairness(navs, f"bandwidth share\n{rep.experiment.name}")
            else:
                fig = figures.plt_box(navs, f"page load time\n{rep.experiment.name}")
        except figures.PlotError:
            continue
        png = out.with_name(f"{out.stem}-{rep.experiment.name}.png")
        fig.savefig(png, dpi=150)
        names[rep.experiment.name] = png.name
    text = render(reps, title="ProtoLens: the papers' experiments reproduced",
                  created=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  machine=f"{platform.node()} ({os.cpu_count()} cores, {platform.platform()})",
                  figures=names)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)
    click.echo(f"report: {out} ({len(names)} figures beside it)")


def _real_sites(urls_file: Path | None, wan: str, uplink: str | None,
                resolvers: tuple[str, ...], ca: Path | None) -> RealSites | None:
    """``--urls`` and the wan path's settings, checked before anything runs."""
    if urls_file is None:
        if uplink or resolvers or ca:
            raise UserError("--uplink, --resolver and --ca apply to real sites (--urls)")
        return None
    try:
        urls = tuple(real_sites.read_urls(urls_file))
    except camp.CampaignError as exc:
        raise UserError(str(exc)) from None
    return RealSites(urls, wan, uplink, resolvers, str(ca.resolve()) if ca else None)


_HELP = f"""Run a paper's experiment on the testbed; print each claim beside a measured ratio with
    its 95% bootstrap interval and a verdict from that interval, untuned.

    NAME: {", ".join(e.name for e in EXPERIMENTS[:-1])} or {EXPERIMENTS[-1].name}; or --all.
    conext20-igor reruns the CC fingerprint's Table 1 (no browser; not part of --all).

    With --urls FILE: the paper's conditions on those real sites (ifip18-wifi,
    ifip18-parallel, student-study's network part).

    Example: protolens lab reproduce --all --quick --out report.md

    Example: protolens lab reproduce student-study --quick --urls sites.txt
    """
"""The command's help, naming every experiment of ``lab/experiments.py``."""


@click.command("reproduce", help=_HELP)
@click.argument("name", metavar="NAME", required=False)
@click.option("--all", "run_all", is_flag=True, help="Every experiment, one after the other.")
@click.option("--quick", is_flag=True, help="A few minutes per experiment instead of 20-60.")
@click.option("--reps", type=click.IntRange(1, 1000), help="Override the repetitions.")
@click.option("--seed", type=int, help="Order seed (default: random, recorded).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a Markdown report here (default with --all: "
                   "reproduction-YYYYmmdd-HHMMSS.md).")
@click.option("--timeout", "timeout_s", default=60.0, show_default=True)
@click.option("--retries", default=1, show_default=True, type=click.IntRange(0, 10))
@click.option("--chromium", default="/usr/bin/chromium", show_default=True)
@click.option("--testbed", "testbed_name", default="plr", show_default=True,
              help="Testbed to use (brought up and down here if not running).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--urls", "urls_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Run the paper's conditions on these real sites (a file, one URL a line) "
                   "instead of the testbed's replicas, through the shaper on the wan path; "
                   "only the experiments whose design allows it (--all: those).")
@click.option("--wan", "wan_name", default="plw", show_default=True,
              help="With --urls: the wan network's name.")
@click.option("--uplink", metavar="IF", help="With --urls: the interface to NAT out of.")
@click.option("--resolver", "resolvers", multiple=True, metavar="IP",
              help="With --urls: a name server for the wan path's namespace (repeatable).")
@click.option("--ca", "ca_file", type=click.Path(dir_okay=False, path_type=Path),
              help="With --urls: also trust this CA (PEM).")
@db_option
def reproduce_cmd(name: str | None, run_all: bool, quick: bool, reps: int | None,
                  seed: int | None, out: Path | None, timeout_s: float, retries: int,
                  chromium: str, testbed_name: str, as_json: bool, db: Path | None,
                  urls_file: Path | None = None, wan_name: str = "plw",
                  uplink: str | None = None, resolvers: tuple[str, ...] = (),
                  ca_file: Path | None = None) -> None:
    real = _real_sites(urls_file, wan_name, uplink, resolvers, ca_file)
    if real is not None and name == "conext20-igor":
        raise UserError("conext20-igor probes the testbed's servers: no --urls")
    if name == "conext20-igor" and not run_all:
        from protolens.cli.cc_reproduce import print_igor
        print_igor(quick, testbed_name, as_json, db)
        return
    if run_all == (name is not None):
        raise UserError("give one experiment NAME or --all (known: "
                        f"{', '.join(e.name for e in EXPERIMENTS)})")
    try:
        exps: list[Experiment] = list(EXPERIMENTS) if run_all else [experiment(name or "")]
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None
    if real is not None and run_all:
        exps = [e for e in exps if e.real_sites]
    if run_all and out is None:
        out = Path(time.strftime("reproduction-%Y%m%d-%H%M%S.md"))
    opts = camp.Settings(db=db_path(db), chromium=chromium,
                         extension=extension_dir(os.environ), timeout_s=timeout_s,
                         retries=retries, progress_to_stderr=as_json)
    done: list[Reproduction] = []
    for exp in exps:
        try:
            rep = reproduce(exp, opts, quick=quick, testbed=testbed_name, reps=reps, seed=seed,
                            real=real)
        except (camp.CampaignError, StoreError) as exc:
            raise UserError(str(exc)) from None
        done.append(rep)
        if not as_json:
            _print(rep)
        if rep.interrupted:
            break
    if as_json:
        emit(done[0].as_json() if len(done) == 1 and not run_all
             else [r.as_json() for r in done], "json")
    if out is not None:
        _write_report(done, out)
    if any(r.interrupted for r in done):
        raise SystemExit(130)
