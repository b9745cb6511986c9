"""Campaign report (pure): per page x condition x arm, n, median and IQR of each metric, the
median ratio to h2 (of PLT and of SpeedIndex), the verdict of the arm's PLT against h2's in the
same cell (``compare``'s: the one rule, ``analysis/verdict.py``), and connections per host."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import median
from typing import Any

import numpy as np

from protolens.analysis.compare import compare_pair

METRICS = ("plt", "ttfb", "fcp", "first_image", "speed_index", "first_visual_change",
           "visual_complete_85", "visual_complete_99", "last_visual_change")
"""Each reads ``<name>_ms``; the visual ones are null for loads without paint capture."""
BASELINE = "h2"


def _quartiles(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    p25, p50, p75 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(p25), float(p50), float(p75)


def report_rows(navigations: Iterable[Mapping[str, Any]], warm: bool = False,
                include_incomplete: bool = False) -> list[dict[str, Any]]:
    """One row per (page, condition, arm), sorted; cold loads unless ``warm``. Incomplete loads
    (docs/RECORD.md "Incomplete records") are left out unless ``include_incomplete``, and
    counted in each row's ``incomplete``."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    left_out: dict[tuple[str, str, str], int] = defaultdict(int)
    for nav in navigations:
        if bool(nav.get("warm")) != warm or nav.get("failed"):
            continue
        cell = (nav["page"], nav["condition"], nav["arm"])
        if nav.get("incomplete"):
            left_out[cell] += 1
            if not include_incomplete:
                groups.setdefault(cell, [])
                continue
        groups[cell].append(nav)
    rows: list[dict[str, Any]] = []
    for (page, condition, arm), navs in sorted(groups.items()):
        row: dict[str, Any] = {"page": page, "condition": condition, "arm": arm, "n": len(navs),
                               "incomplete": left_out[(page, condition, arm)]}
        for metric in METRICS:
            values = [float(n[f"{metric}_ms"]) for n in navs if n.get(f"{metric}_ms") is not None]
            p25, p50, p75 = _quartiles(values)
            row[f"{metric}_median_ms"] = p50
            row[f"{metric}_p25_ms"] = p25
            row[f"{metric}_p75_ms"] = p75
        per_host: dict[str, list[int]] = defaultdict(list)
        for nav in navs:
            for host, count in (nav.get("hosts") or {}).items():
                per_host[host].append(int(count))
        row["connections_per_host"] = {h: _count_median(c) for h, c in sorted(per_host.items())}
        rows.append(row)
    for metric in ("plt", "speed_index"):
        base = {(r["page"], r["condition"]): r[f"{metric}_median_ms"] for r in rows
                if r["arm"] == BASELINE}
        for row in rows:
            ref = base.get((row["page"], row["condition"]))
            mine = row[f"{metric}_median_ms"]
            row[f"{metric}_ratio_to_h2"] = (mine / ref) if (ref and mine is not None) else None
    plts = {key: [float(n["plt_ms"]) for n in navs if n.get("plt_ms") is not None]
            for key, navs in groups.items()}
    for row in rows:
        h2 = plts.get((row["page"], row["condition"], BASELINE))
        mine_plt = plts.get((row["page"], row["condition"], row["arm"]))
        row["plt_vs_h2"] = None
        if row["arm"] != BASELINE and h2 and mine_plt:
            row["plt_vs_h2"] = compare_pair(row["page"], row["condition"], row["arm"], mine_plt,
                                            BASELINE, h2).verdict
    return rows


def _count_median(counts: Sequence[int]) -> int | float:
    """The median of connection counts: a whole number stays an int (6, not 6.0, when an even n's
    middle two agree, as an odd n's median already is); between two counts, their midpoint."""
    m = median(counts)
    return int(m) if float(m).is_integer() else float(m)
