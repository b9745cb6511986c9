"""``protolens compare``: per page (or domain) x condition and each pair of arms, medians, the
shift between the arms with its 95% interval, a Mann-Whitney U p-value and the verdict of the one
rule (docs/RESEARCH.md). The workflow is ``research/compare.py``; this parses, calls, prints."""

from __future__ import annotations

from pathlib import Path

import click

from protolens.analysis.observe import METRICS
from protolens.cli.db import db_option, db_path, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.research.compare import CompareError, Request, StoreFailure, run, zero_width


def _arms(text: str | None) -> list[str] | None:
    arms = [a.strip() for a in (text or "").split(",") if a.strip()]
    if text is not None and len(arms) < 2:
        raise UserError(f"--arms: give at least two arms, comma-separated (got {text!r})")
    return arms or None


def _csv_arms(text: str | None) -> list[str] | None:
    return [a.strip() for a in text.split(",") if a.strip()] if text else None


@click.command("compare")
@click.option("--campaign", help="A lab campaign's name (see: protolens lab campaigns).")
@click.option("--source", type=click.Choice(["passive", "experiment"]),
              help="Everyday browsing (arm = main document's protocol) or experiment records.")
@click.option("--domain", help="Only this domain and its subdomains (with --source).")
@click.option("--metric", type=click.Choice(METRICS), default="plt", show_default=True,
              help="Page load time, time to first byte, first/largest contentful paint, first "
                   "image, or a visual metric (SpeedIndex, first/last visual change, visually "
                   "complete 85/99%: loads recorded with paint capture).")
@click.option("--arms", help="Only these arms, in this order (e.g. h1,h2).")
@click.option("--warm", is_flag=True, help="Compare warm loads instead of cold ones.")
@click.option("--seed", type=int, default=0, hidden=True,
              help="Accepted and ignored: the interval is exact, nothing is resampled.")
@click.option("--resamples", type=click.IntRange(100, 100_000), default=2000, hidden=True,
              help="Accepted and ignored: the interval is exact, nothing is resampled.")
@click.option("--by-cc", is_flag=True,
              help="Group loads also by the CC class of the servers that carried most of "
                   "their bytes (delay-based, loss-based, mixed, unlabelled; protolens cc "
                   "probe).")
@click.option("--bundle", "bundles", multiple=True, type=click.Path(path_type=Path),
              help="Read shared bundles (.tar or directory) with DuckDB instead of the store; "
                   "repeatable.")
@click.option("--dataset", type=click.Path(file_okay=False, path_type=Path),
              help="A collector's data directory: compare across contributors (each one a "
                   "stratum), per domain and network type.")
@click.option("--engine", type=click.Choice(["duckdb", "spark"]), default="duckdb",
              show_default=True, help="With --dataset: who scans and aggregates the files.")
@click.option("--spark-master", help="With --engine spark: a cluster URL (default local[*]).")
@click.option("--include-incomplete", is_flag=True,
              help="Keep loads whose record is incomplete (left out by default, and counted).")
@click.option("--baseline", metavar="CAMPAIGN",
              help="Compare --campaign against this baseline campaign (of --db, "
                   "--baseline-db or --baseline-dataset), cell by cell (page x arm x "
                   "condition): the change with its 95% interval and a verdict.")
@click.option("--baseline-db", type=click.Path(dir_okay=False, path_type=Path),
              help="The baseline's store (default: --db); alone, the same campaign or "
                   "--source in the two stores.")
@click.option("--baseline-dataset", type=click.Path(path_type=Path), metavar="DIR",
              help="A collector's data directory as the baseline: every lab load it holds "
                   "(with --baseline CAMPAIGN, that campaign's, if its name is in clear), or "
                   "with --source its loads of that source. Contributions are anonymized, so "
                   "cells match on what both sides have: the page when it is a corpus page "
                   "name, else its origin's host (in clear only if allow-listed); condition "
                   "and arm when they are ProtoLens's own names.")
@click.option("--fail-on-regression", "fail_pct", type=click.FloatRange(0, 10_000),
              metavar="PCT", help="With a baseline: exit 1 when any cell is surely (its 95% "
                                  "interval wholly) more than PCT% slower than the baseline's "
                                  "median.")
@db_option
@output_options
def compare_cmd(campaign: str | None, source: str | None, domain: str | None, metric: str,
                arms: str | None, warm: bool, seed: int, resamples: int,
                bundles: tuple[Path, ...], db: Path | None, fmt: str,
                by_cc: bool = False, dataset: Path | None = None, engine: str = "duckdb",
                spark_master: str | None = None, include_incomplete: bool = False,
                baseline: str | None = None, baseline_db: Path | None = None,
                fail_pct: float | None = None, baseline_dataset: Path | None = None) -> None:
    """Compare arms (or protocols) per page and condition, with 95% intervals and a verdict;
    or, with a baseline, the current campaign against it cell by cell.

    Example: protolens compare --campaign ifip18-loss --metric speed_index --csv

    Example: protolens compare --baseline before --campaign after --fail-on-regression 5

    Example: protolens compare --baseline-dataset /srv/pl --campaign after --json
    """
    if baseline is not None or baseline_db is not None or baseline_dataset is not None:
        if bundles or dataset is not None or by_cc or domain is not None:
            raise UserError("--baseline: not with --bundle, --dataset, --by-cc or --domain")
        from protolens.cli.compare_baseline import baseline_compare
        baseline_compare(baseline=baseline, baseline_db=baseline_db,
                         baseline_dataset=baseline_dataset, campaign=campaign, source=source,
                         db=db_path(db), metric=metric, warm=warm,
                         include_incomplete=include_incomplete, arms=_csv_arms(arms),
                         fmt=fmt, fail_pct=fail_pct)
        return
    if fail_pct is not None:
        raise UserError("--fail-on-regression needs a baseline (--baseline, --baseline-db or "
                        "--baseline-dataset)")
    req = Request(campaign=campaign, source=source, domain=domain, metric=metric,
                  arms=_arms(arms), warm=warm, by_cc=by_cc, bundles=bundles, db=db,
                  dataset=dataset, engine=engine, spark_master=spark_master,
                  include_incomplete=include_incomplete)
    try:
        result = run(req, db_path(db))
    except StoreFailure as exc:
        raise store_failure(db, exc) from None
    except CompareError as exc:
        raise UserError(str(exc)) from None
    if not result.rows and fmt == "table":
        where = f" in {dataset}" if dataset is not None else ""
        raise UserError(f"nothing to compare{where}: {result.loads} loads with a {metric} "
                        "value, and no cell with two arms")
    if result.incomplete and fmt == "table":
        click.echo(f"{result.incomplete} incomplete load(s) " + (
            "kept (--include-incomplete)" if include_incomplete else
            "left out (--include-incomplete keeps them)"), err=True)
    emit(result.rows, fmt, title=result.title,
         columns=result.columns if fmt == "table" else None)
    bad = zero_width(result.rows)
    if bad:
        raise UserError(f"{len(bad)} cell(s) have a zero-width interval over more than one "
                        f"load (copies of one load?), refused as results: {'; '.join(bad[:3])}")
