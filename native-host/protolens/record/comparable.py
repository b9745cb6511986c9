"""Which loads a comparison takes: the one rule, everywhere a figure is made of loads.

A load counts when it succeeded, is cold (or, when asked, warm: never both in one figure) and its
record is complete (docs/RECORD.md "Incomplete records": a record cut short, or a load that waited
on a dialog or ran in a hidden tab, does not time what the network did), unless the user keeps the
incomplete ones (``--include-incomplete``). Records from before the flag (null) count as complete.

``compare`` (store, bundles, a collector's dataset in DuckDB or Spark), ``report``, ``plot``,
the paper findings (``lab/estimate.py``), ``policy suggest``, ``collector publish`` and the
extension's dashboard all take their loads by it: the Python predicate for rows already read, the
SQL text where the engine filters (the ``arm_summary`` view spells it out in its migration, m020,
held to it by a test). Until 2026-11-30 all of these but ``compare`` and ``report`` had their own
filters, which kept incomplete loads (and the dashboard warm ones too), so that ``compare
--dataset`` could print another verdict than ``compare`` over the same loads.

Pure data at the bottom of the package, beside the record's own definitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def comparable(row: Mapping[str, Any], warm: bool = False,
               include_incomplete: bool = False) -> bool:
    """Whether a navigation row (columns ``failed``, ``warm``, ``incomplete``) is one of the
    loads a cold (or ``warm``) comparison takes."""
    if row.get("failed") or bool(row.get("warm")) != warm:
        return False
    return include_incomplete or not row.get("incomplete")


def comparable_sql(alias: str, warm: bool | None = None,
                   include_incomplete: bool = False) -> str:
    """``comparable`` as a SQL condition on the navigation row ``alias`` (SQLite, DuckDB and
    Spark SQL alike). ``warm`` None leaves one ``?`` parameter for it (1: warm, 0: cold)."""
    wanted = "?" if warm is None else str(int(warm))
    rule = f"{alias}.failed = 0 AND {alias}.warm = {wanted}"
    return rule if include_incomplete else f"{rule} AND coalesce({alias}.incomplete, 0) = 0"
