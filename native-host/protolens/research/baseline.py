"""``compare --baseline``'s workflow: read the baseline's loads and the current ones (two
campaigns of one store, or of two stores; one source of two stores; or a collector's dataset
against a store), place them in cells and compare cell by cell with ``analysis/baseline.py``.
Plain arguments in, rows out; every problem a user can fix is a ``CompareError`` of one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.analysis import baseline as core
from protolens.analysis.observe import METRICS, Observation, observations
from protolens.research.baseline_dataset import ANONYMIZED, dataset_rows, shared_cell
from protolens.research.compare import CompareError, StoreFailure
from protolens.store import DatabaseError, StoreError, open_ro
from protolens.store.health import is_corruption


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a store and a campaign in it (or a source: passive,
    experiment); or a collector's data directory, its campaign or its loads of a source (``lab``
    too: every lab load it holds)."""

    db: Path
    campaign: str | None = None
    source: str | None = None
    dataset: bool = False
    """``db`` is a collector's data directory (its pooled Parquet dataset), not a store."""

    def label(self) -> str:
        what = self.campaign or ("lab loads" if self.source == "lab" else self.source)
        return f"{what} ({'dataset ' if self.dataset else ''}{self.db.name})"

    def mode(self) -> str:
        """How its rows fall into cells (``analysis/observe.py``): lab loads by their tags."""
        return "campaign" if self.campaign or self.source == "lab" else str(self.source)


@dataclass(frozen=True)
class BaselineResult:
    rows: list[dict[str, Any]]
    title: str
    only_baseline: list[core.Cell]
    only_current: list[core.Cell]


def run(baseline: Side, current: Side, metric: str = "plt", warm: bool = False,
        include_incomplete: bool = False) -> BaselineResult:
    """Current against baseline, per cell both have; ``CompareError`` when none is common."""
    if metric not in METRICS:
        raise CompareError(f"--metric {metric}: unknown (choose from {', '.join(METRICS)})")
    shared = baseline.dataset or current.dataset
    base = read(baseline, metric, warm, include_incomplete, "baseline", shared)
    cur = read(current, metric, warm, include_incomplete, "current", shared)
    c = core.cells(base, cur)
    if not c.common:
        raise CompareError(
            f"no cell (page x arm x condition) in common: the baseline has "
            f"{_some(c.only_baseline)}, the current {_some(c.only_current)}"
            + (ANONYMIZED if shared else ""))
    return BaselineResult(core.compare_baseline(c),
                          f"{metric}: {current.label()} against {baseline.label()}",
                          c.only_baseline, c.only_current)


def _some(cells: list[core.Cell]) -> str:
    if not cells:
        return "none with a value"
    more = f" and {len(cells) - 2} more" if len(cells) > 2 else ""
    return ", ".join(core.cell_text(c) for c in cells[:2]) + more


def read(side: Side, metric: str, warm: bool, include_incomplete: bool, role: str,
         shared: bool = False) -> list[Observation]:
    """The side's observations; its store's or campaign's absence is a one-line error.
    ``shared``: one side is a dataset, so cells are keyed on what a bundle keeps in clear
    (``research/baseline_dataset.py``)."""
    rows = (dataset_rows(side.db, side.campaign, side.source, role) if side.dataset
            else _store_rows(side, role))
    if shared:
        rows = [shared_cell(row) for row in rows]
    return observations(rows, metric, side.mode(), warm=warm,
                        include_incomplete=include_incomplete)


def _store_rows(side: Side, role: str) -> list[dict[str, Any]]:
    from protolens.store.compare import compare_rows, known_campaigns

    if not side.db.exists():
        raise CompareError(f"{role} store {side.db}: no such file")
    try:
        conn = open_ro(side.db)
    except StoreError as exc:
        if is_corruption(exc):
            raise StoreFailure(str(exc), side.db) from None
        raise CompareError(str(exc)) from None
    try:
        rows = compare_rows(conn, campaign=side.campaign, source=side.source)
        if not rows:
            what = f"campaign {side.campaign!r}" if side.campaign else f"{side.source} loads"
            names = known_campaigns(conn) if side.campaign else []
            known = f" (known: {', '.join(names[:5]) or 'none'})" if side.campaign else ""
            raise CompareError(f"{role}: no navigations of {what} in {side.db}{known}")
    except DatabaseError as exc:
        raise StoreFailure(str(exc), side.db) from None
    finally:
        conn.close()
    return rows
