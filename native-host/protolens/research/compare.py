"""``compare``'s workflow: choose the source of the loads (the SQLite store, shared bundles read
by DuckDB, or a collector's dataset scanned by DuckDB or Spark), regroup them by the servers' CC
class when asked, and compare arms with ``analysis/compare.py`` (one store or bundles) or
``analysis/stratified.py`` (a dataset: the contributor as a stratum). Plain arguments in, rows
out; every problem a user can fix is a ``CompareError`` of one line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protolens.analysis.compare import compare
from protolens.analysis.observe import METRICS, incomplete_count, observations
from protolens.analysis.stratified import Columns, compare_cells
from protolens.cc.share import UNLABELLED, nav_class
from protolens.store import Connection, DatabaseError, StoreError, open_ro
from protolens.store import cc as ccstore
from protolens.store.health import is_corruption

TABLE_COLUMNS = ("group", "condition", "arm_a", "arm_b", "n_a", "n_b", "median_a_ms",
                 "median_b_ms", "diff_ms", "ci_low_ms", "ci_high_ms", "p_value", "verdict")
DATASET_COLUMNS = (*TABLE_COLUMNS[:6], "contributors", *TABLE_COLUMNS[6:])


class CompareError(Exception):
    """A request that cannot be answered, in one line."""


class StoreFailure(CompareError):
    """The store exists but is not a usable ProtoLens store (the CLI words the hint)."""

    def __init__(self, message: str, db: Path | None = None) -> None:
        super().__init__(message)
        self.db = db
        """Which store, where a command reads more than one (``compare --baseline``)."""


@dataclass(frozen=True)
class Request:
    """What to compare and where the loads come from (one of ``campaign``/``source``)."""

    campaign: str | None = None
    source: str | None = None
    """``passive`` or ``experiment``."""
    domain: str | None = None
    metric: str = "plt"
    arms: Sequence[str] | None = None
    warm: bool = False
    by_cc: bool = False
    bundles: Sequence[Path] = ()
    db: Path | None = None
    dataset: Path | None = None
    engine: str = "duckdb"
    spark_master: str | None = None
    include_incomplete: bool = False
    """Keep loads whose record is incomplete (docs/RECORD.md "Incomplete records")."""


@dataclass(frozen=True)
class Result:
    rows: list[dict[str, Any]]
    title: str
    columns: tuple[str, ...]
    loads: int
    """Loads with a value of the metric (for the "nothing to compare" message)."""
    incomplete: int = 0
    """Loads left out (or, with ``include_incomplete``, kept) because their record is
    incomplete."""


def check(r: Request) -> None:
    """The combinations of options that make no sense, as one-line errors."""
    if (r.campaign is None) == (r.source is None):
        raise CompareError("give exactly one of --campaign NAME or --source passive|experiment")
    if r.domain is not None and r.campaign is not None:
        raise CompareError("--domain applies to --source data, not to a campaign")
    if r.metric not in METRICS:
        raise CompareError(f"--metric {r.metric}: unknown (choose from {', '.join(METRICS)})")
    if r.dataset is not None:
        from protolens.store.dataset import METRIC_COLUMNS

        if r.bundles or r.db is not None or r.by_cc:
            raise CompareError("--dataset: not with --bundle, --db or --by-cc")
        if r.domain is not None:
            raise CompareError("--domain: not with --dataset (its groups are the domains "
                               "already)")
        if r.metric not in METRIC_COLUMNS:
            raise CompareError(f"--metric {r.metric}: not in collector datasets (choose from "
                               f"{', '.join(METRIC_COLUMNS)})")
        return
    if r.engine != "duckdb" or r.spark_master is not None:
        raise CompareError("--engine and --spark-master apply to --dataset only")
    if r.by_cc and r.bundles:
        raise CompareError("--by-cc reads the CC labels of the store, not bundles")


def run(r: Request, default_db: Path) -> Result:
    """Compare as ``r`` asks (``default_db``: the store when ``r.db`` is None)."""
    check(r)
    key = str(r.campaign or r.source)
    if r.dataset is not None:
        from protolens.store.dataset import DatasetError, incomplete_loads

        rows, n = dataset_rows(r, dataset_cells(r))
        try:
            left = incomplete_loads(r.dataset, _mode(r), r.warm, key)
        except DatasetError as exc:
            raise CompareError(str(exc)) from None
        return Result(rows, f"{r.metric}: {key} across contributors", DATASET_COLUMNS, n, left)
    nav_rows, classes = _rows(r, r.db or default_db)
    keep = r.include_incomplete
    if r.by_cc:
        obs = [replace(o, group=f"{o.group} [{classes.get(str(row['id']), UNLABELLED)}]")
               for row in nav_rows for o in observations([row], r.metric, _mode(r),
                                                         domain=r.domain, warm=r.warm,
                                                         include_incomplete=keep)]
    else:
        obs = observations(nav_rows, r.metric, _mode(r), domain=r.domain, warm=r.warm,
                           include_incomplete=keep)
    rows = [c.to_row() | {"metric": r.metric} for c in compare(obs, arms=r.arms)]
    return Result(rows, f"{r.metric}: {key}", TABLE_COLUMNS, len(obs),
                  incomplete_count(nav_rows, warm=r.warm))


def _mode(r: Request) -> str:
    return "campaign" if r.campaign is not None else str(r.source)


def _rows(r: Request, db: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Navigation rows from bundles or the store, and (``--by-cc``) each one's CC class."""
    if r.bundles:
        from protolens.share import duck
        from protolens.share.bundle import BundleError

        try:
            rows = duck.compare_rows(list(r.bundles), campaign=r.campaign, source=r.source)
        except BundleError as exc:
            raise CompareError(str(exc)) from None
        if r.campaign is not None and not rows:
            raise CompareError(f"no navigations in campaign {r.campaign!r} in these bundles")
        return rows, {}
    from protolens.store.compare import compare_rows, known_campaigns

    try:
        conn = open_ro(db)
    except StoreError as exc:
        raise (StoreFailure if is_corruption(exc) else CompareError)(str(exc)) from None
    try:
        rows = compare_rows(conn, campaign=r.campaign, source=r.source)
        if r.campaign is not None and not rows:
            names = known_campaigns(conn)
            raise CompareError(f"no navigations in campaign {r.campaign!r} (known: "
                               f"{', '.join(names[:5]) or 'none'})")
        return rows, (cc_classes(conn, r.campaign) if r.by_cc else {})
    except DatabaseError as exc:
        raise StoreFailure(str(exc)) from None
    finally:
        conn.close()


def cc_classes(conn: Connection, campaign: str | None) -> dict[str, str]:
    """navigation id -> its CC class (``cc.share.nav_class``); empty before any probe."""
    if not ccstore.has_cc_table(conn):
        raise CompareError("--by-cc: no CC labels in this store yet (protolens cc probe URL)")
    return {str(row["navigation_id"]): nav_class(row)
            for row in ccstore.navigation_cc_bytes(conn, campaign=campaign)}


def dataset_cells(r: Request) -> Columns:
    """The cells (per contributor, group, condition and arm: the sorted values) DuckDB or Spark
    computed over ``r.dataset``, as columns."""
    from protolens.store.dataset import DatasetError, cells_arrow

    assert r.dataset is not None
    key = str(r.campaign or r.source)
    try:
        if r.engine == "spark":
            from protolens.store import spark

            rows = spark.cells(r.dataset, _mode(r), r.metric, r.warm, key,
                               r.spark_master or "local[*]", r.include_incomplete)
            return Columns.of_rows((c["contributor"], c["grp"], c["cond"], c["arm"], c["vals"])
                                   for c in rows)
        return _columns(cells_arrow(r.dataset, _mode(r), r.metric, r.warm, key,
                                    r.include_incomplete))
    except DatasetError as exc:
        raise CompareError(str(exc)) from None


def _columns(table: Any) -> Columns:
    """An Arrow table of cells as ``Columns``: each key column dictionary-encoded by Arrow, the
    values flattened, nothing made into Python objects but the distinct names."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    keys = []
    for name in ("contributor", "grp", "cond", "arm"):
        enc = pc.dictionary_encode(table.column(name)).combine_chunks()
        keys.append((enc.indices.to_numpy(zero_copy_only=False), enc.dictionary.to_pylist()))
    vals = table.column("vals").combine_chunks()
    return Columns.of_codes(keys, pc.list_value_length(vals).to_numpy(zero_copy_only=False),
                            pc.list_flatten(vals).to_numpy(zero_copy_only=False))


def dataset_rows(r: Request, cells: Columns) -> tuple[list[dict[str, Any]], int]:
    """The comparisons across contributors of those cells, and the loads they hold."""
    rows = [c.to_row() | {"contributors": n, "metric": r.metric}
            for c, n in compare_cells(cells, arms=r.arms)]
    return rows, len(cells.values)


def zero_width(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The cells whose interval came out of zero width over more than one load (refused by the
    verdict rule): ``group / condition / arm_a-arm_b``."""
    return [f"{row['group']} / {row['condition']} / {row['arm_a']}-{row['arm_b']}"
            for row in rows if row.get("outcome") == "error"]
