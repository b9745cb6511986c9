"""``protolens compare``: per page (or domain) x condition and each pair of arms, medians, the
median difference with a bootstrap 95% CI, a Mann-Whitney U p-value and a verdict (issue 5)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import click

from protolens.analysis.compare import compare
from protolens.analysis.observe import METRICS, Observation, observations
from protolens.analysis.stratified import compare_stratified
from protolens.cc.share import UNLABELLED, nav_class
from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.share import duck
from protolens.share.bundle import BundleError
from protolens.store import Connection, DatabaseError
from protolens.store import cc as ccstore
from protolens.store.compare import compare_rows, known_campaigns
from protolens.store.dataset import METRIC_COLUMNS as DATASET_METRICS
from protolens.store.dataset import DatasetError
from protolens.store.dataset import cells as dataset_cells

TABLE_COLUMNS = ("group", "condition", "arm_a", "arm_b", "n_a", "n_b", "median_a_ms",
                 "median_b_ms", "diff_ms", "ci_low_ms", "ci_high_ms", "p_value", "verdict")


def _arms(text: str | None) -> list[str] | None:
    arms = [a.strip() for a in (text or "").split(",") if a.strip()]
    if text is not None and len(arms) < 2:
        raise UserError(f"--arms: give at least two arms, comma-separated (got {text!r})")
    return arms or None


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
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--resamples", type=click.IntRange(100, 100_000), default=2000,
              show_default=True, help="Bootstrap resamples.")
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
@db_option
@output_options
def compare_cmd(campaign: str | None, source: str | None, domain: str | None, metric: str,
                arms: str | None, warm: bool, seed: int, resamples: int,
                bundles: tuple[Path, ...], db: Path | None, fmt: str,
                by_cc: bool = False, dataset: Path | None = None, engine: str = "duckdb",
                spark_master: str | None = None) -> None:
    """Compare arms (or protocols) per page and condition, with confidence intervals.

    Example: protolens compare --campaign ifip18-loss --metric speed_index --csv
    """
    if (campaign is None) == (source is None):
        raise UserError("give exactly one of --campaign NAME or --source passive|experiment")
    if domain is not None and campaign is not None:
        raise UserError("--domain applies to --source data, not to a campaign")
    wanted = _arms(arms)
    if dataset is not None:
        if bundles or db is not None or by_cc:
            raise UserError("--dataset: not with --bundle, --db or --by-cc")
        if domain is not None:
            raise UserError("--domain: not with --dataset (its groups are the domains already)")
        if metric not in DATASET_METRICS:
            raise UserError(f"--metric {metric}: not in collector datasets (choose from "
                            f"{', '.join(DATASET_METRICS)})")
        _compare_dataset(dataset, campaign, source, metric, warm, seed, resamples, wanted,
                         engine, spark_master, fmt)
        return
    if engine != "duckdb" or spark_master is not None:
        raise UserError("--engine and --spark-master apply to --dataset only")
    if by_cc and bundles:
        raise UserError("--by-cc reads the CC labels of the store, not bundles")
    classes: dict[str, str] = {}
    if bundles:
        try:
            rows = duck.compare_rows(list(bundles), campaign=campaign, source=source)
        except BundleError as exc:
            raise UserError(str(exc)) from None
        if campaign is not None and not rows:
            raise UserError(f"no navigations in campaign {campaign!r} in these bundles")
    else:
        conn = connect_ro(db)
        try:
            rows = compare_rows(conn, campaign=campaign, source=source)
            if campaign is not None and not rows:
                names = known_campaigns(conn)
                raise UserError(f"no navigations in campaign {campaign!r} (known: "
                                f"{', '.join(names[:5]) or 'none'})")
            if by_cc:
                classes = cc_classes(conn, campaign)
        except DatabaseError as exc:
            raise store_failure(db, exc) from None
    mode = "campaign" if campaign is not None else str(source)
    if by_cc:
        obs = [replace(o, group=f"{o.group} [{classes.get(str(row['id']), UNLABELLED)}]")
               for row in rows for o in observations([row], metric, mode, domain=domain,
                                                      warm=warm)]
    else:
        obs = observations(rows, metric, mode, domain=domain, warm=warm)
    result = [c.to_row() | {"metric": metric}
              for c in compare(obs, seed=seed, resamples=resamples, arms=wanted)]
    if not result and fmt == "table":
        raise UserError(f"nothing to compare: {len(obs)} loads with a {metric} value, and no "
                        "cell with two arms")
    emit(result, fmt, title=f"{metric}: {campaign or source}",
         columns=TABLE_COLUMNS if fmt == "table" else None)


def cc_classes(conn: Connection, campaign: str | None) -> dict[str, str]:
    """navigation id -> its CC class (``cc.share.nav_class``); empty before any probe."""
    if not ccstore.has_cc_table(conn):
        raise UserError("--by-cc: no CC labels in this store yet (protolens cc probe URL)")
    return {str(r["navigation_id"]): nav_class(r)
            for r in ccstore.navigation_cc_bytes(conn, campaign=campaign)}


def dataset_observations(data: Path, mode: str, key: str, metric: str, warm: bool,
                         engine: str, master: str | None) -> dict[str, list[Observation]]:
    """Observations per contributor from the cells DuckDB or Spark computed."""
    if engine == "spark":
        from protolens.store import spark

        rows = spark.cells(data, mode, metric, warm, key, master or "local[*]")
    else:
        rows = dataset_cells(data, mode, metric, warm, key)
    out: dict[str, list[Observation]] = defaultdict(list)
    for r in rows:
        out[str(r["contributor"])].extend(
            Observation(str(r["grp"]), str(r["cond"]), str(r["arm"]), float(v))
            for v in r["vals"])
    return out


def _compare_dataset(data: Path, campaign: str | None, source: str | None, metric: str,
                     warm: bool, seed: int, resamples: int, arms: list[str] | None,
                     engine: str, master: str | None, fmt: str) -> None:
    """``compare --dataset``: cells from DuckDB (or Spark) over the collector's Parquet
    dataset, compared with the contributor as a stratum (``analysis/stratified.py``)."""
    mode = "campaign" if campaign is not None else str(source)
    try:
        obs = dataset_observations(data, mode, str(campaign or source), metric, warm, engine,
                                   master)
    except DatasetError as exc:
        raise UserError(str(exc)) from None
    result = [c.to_row() | {"contributors": n, "metric": metric}
              for c, n in compare_stratified(obs, seed=seed, resamples=resamples, arms=arms)]
    if not result and fmt == "table":
        raise UserError(f"nothing to compare in {data}: no cell with two arms")
    emit(result, fmt, title=f"{metric}: {campaign or source} across contributors",
         columns=(*TABLE_COLUMNS[:6], "contributors", *TABLE_COLUMNS[6:])
         if fmt == "table" else None)
