"""``protolens lab fairness``: two page loads at once on one bottleneck, each side's share of it
over time, the Jain index and each side's PLT (IFIP'18 Sec. V-D, Fig. 7). The run is
``lab.fairness_run``; this module parses, shows progress and prints."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from protolens.cli.db import db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.lab import campaign as camp
from protolens.lab.fairness import Pair, PairError, progress_line
from protolens.paths import extension_dir
from protolens.store import StoreError


@click.command("fairness")
@click.option("--pairs", required=True,
              help="Comma-separated A:B arm pairs, e.g. h2:h3,h2-parallel:2:h3,h1:h2 "
                   "(arms: h1, h2, h3, h2-parallel:N, proxy-h1/h2/h3, bulk).")
@click.option("--page", default="cell-10x435k", show_default=True,
              help="Corpus page both sides load (the paper: large JPG images).")
@click.option("--condition", default="wifi", show_default=True,
              help="Testbed profile of the shared bottleneck (the paper: 7 Mbit/s).")
@click.option("--reps", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--duration", "duration_s", type=click.FloatRange(1, 86400),
              help="Repeat each pair for this many seconds instead of --reps.")
@click.option("--campaign", help="Campaign name (default: fairness-<time>).")
@click.option("--server-cc", default="cubic", show_default=True)
@click.option("--seed", type=int)
@click.option("--timeout", "timeout_s", default=120.0, show_default=True)
@click.option("--chromium", default="/usr/bin/chromium", show_default=True)
@click.option("--testbed", "testbed_name", default="plf", show_default=True)
@output_options
@db_option
def fairness_cmd(pairs: str, page: str, condition: str, reps: int, duration_s: float | None,
                 campaign: str | None, server_cc: str, seed: int | None, timeout_s: float,
                 chromium: str, testbed_name: str, fmt: str, db: Path | None) -> None:
    """Load a page with two protocols at the same moment through one bottleneck; print each
    side's share of it (mean over repetitions, 95% interval), throughput, connections, PLT and
    the Jain index. Needs root (the testbed).

    Example: protolens lab fairness --pairs h2:h3,h2-parallel:2:h3,h1:h2,h1:h3 --reps 5
    """
    from protolens.lab import fairness_run

    settings = camp.Settings(db=db_path(db), chromium=chromium,
                             extension=extension_dir(os.environ), timeout_s=timeout_s)
    try:
        spec = fairness_run.prepare(pairs, page=page, condition=condition, reps=reps,
                                    server_cc=server_cc, testbed=testbed_name,
                                    settings=settings, campaign=campaign, seed=seed,
                                    duration_s=duration_s)
    except (PairError, camp.CampaignError) as exc:
        raise UserError(str(exc)) from None

    def progress(pair: Pair, rep: int, rows: list[dict[str, Any]],
                 flows: list[dict[str, Any]]) -> None:
        click.echo(progress_line(pair.name, rep, rows), err=True)

    def rerun(pair: Pair, rep: int, why: str) -> None:
        click.echo(f"{pair.name} rep {rep}: {why}; run again", err=True)

    try:
        outcome = fairness_run.run(spec, settings, on_rep=progress, on_rerun=rerun)
        rows = fairness_run.summary(settings.db, spec.campaign)
    except (StoreError, RuntimeError, OSError) as exc:
        raise UserError(f"lab fairness: {exc}") from None
    emit(rows, fmt, title=f"Fairness, campaign {spec.campaign} ({spec.page}, {spec.condition})")
    for failure in outcome.failures:
        click.echo(f"failed: {failure}", err=True)
    if outcome.interrupted:
        raise SystemExit(130)
