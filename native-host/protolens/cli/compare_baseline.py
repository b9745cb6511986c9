"""``protolens compare --baseline`` (``--baseline-db``, ``--baseline-dataset``): current against
a baseline (a campaign, a store, or a collector's dataset), cell by cell, and the regression gate
for CI (``--fail-on-regression PCT``: exit 1). The workflow is ``research/baseline.py``; this
parses, calls, prints."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from protolens.analysis.baseline import COLUMNS, cell_text, regressions
from protolens.cli.db import store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit
from protolens.research.baseline import Side, run
from protolens.research.compare import CompareError, StoreFailure

REGRESSION_EXIT = 1
"""``--fail-on-regression``: a cell surely slower than the threshold (2 stays bad input)."""


def baseline_compare(*, baseline: str | None, baseline_db: Path | None,
                     baseline_dataset: Path | None, campaign: str | None, source: str | None,
                     db: Path, metric: str, warm: bool, include_incomplete: bool,
                     arms: Sequence[str] | None, fmt: str, fail_pct: float | None) -> None:
    if baseline_dataset is not None and baseline_db is not None:
        raise UserError("--baseline-dataset: not with --baseline-db (the baseline is one store "
                        "or one dataset)")
    if (campaign is None) == (source is None):
        raise UserError("give exactly one of --campaign NAME or --source passive|experiment "
                        "(the current side)")
    if source is not None and baseline is not None:
        raise UserError("--baseline names a campaign: with --source compare two stores "
                        "(--baseline-db PATH) or a dataset and a store (--baseline-dataset DIR)")
    cur = Side(db, campaign=campaign, source=source)
    base = _baseline(baseline, baseline_db, baseline_dataset, cur)
    if base == cur:
        raise UserError("the baseline is the current data itself: name another campaign "
                        "(--baseline), store (--baseline-db) or dataset (--baseline-dataset)")
    try:
        result = run(base, cur, metric, warm, include_incomplete)
    except StoreFailure as exc:
        raise store_failure(exc.db or base.db, exc) from None
    except CompareError as exc:
        raise UserError(str(exc)) from None
    rows = [r | {"metric": metric} for r in result.rows if not arms or r["arm"] in arms]
    if not rows:
        raise UserError(f"no cell of arms {', '.join(arms or ())} in common")
    skipped = len(result.only_baseline) + len(result.only_current)
    if skipped:
        names = (_names("only in the baseline", result.only_baseline)
                 + _names("only in the current", result.only_current))
        click.echo(f"{skipped} cell(s) not compared: {names}", err=True)
    emit(rows, fmt, title=result.title, columns=COLUMNS if fmt == "table" else None)
    if fail_pct is not None:
        _gate(rows, fail_pct)


def _baseline(campaign: str | None, db: Path | None, dataset: Path | None, cur: Side) -> Side:
    """The baseline side: a dataset's lab loads (or its campaign, or its loads of the current
    side's source), else a campaign of a store (the current campaign of another store, or the
    current source)."""
    if dataset is not None:
        return Side(dataset, campaign=campaign,
                    source=None if campaign else (cur.source or "lab"), dataset=True)
    return Side(db or cur.db, campaign=campaign or cur.campaign,
                source=None if campaign or cur.campaign else cur.source)


def _names(what: str, cells: Sequence[tuple[str, str, str]]) -> str:
    if not cells:
        return ""
    more = f" and {len(cells) - 3} more" if len(cells) > 3 else ""
    return f"{what}: {'; '.join(cell_text(c) for c in cells[:3])}{more}. "


def _gate(rows: Sequence[Mapping[str, Any]], pct: float) -> None:
    bad = regressions(rows, pct)
    if not bad:
        return
    for r in bad:
        click.echo(f"regression: {r['group']} / {r['arm']} / {r['condition']}: "
                   f"+{r['change_pct']:.1f}% [{r['ci_low_pct']:.1f}, {r['ci_high_pct']:.1f}] "
                   f"over {pct:g}%", err=True)
    sys.exit(REGRESSION_EXIT)
