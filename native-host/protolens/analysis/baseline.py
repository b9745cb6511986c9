"""Baseline against current (pure): "did my change make this site faster?", cell by cell
(group x arm x condition), as sitespeed.io's compare plugin and Lighthouse CI answer it from a
baseline run.

Each cell common to both sides is one ``compare_pair`` (``analysis/compare.py``): the
Hodges-Lehmann shift of current against baseline with its exact 95% interval, the Mann-Whitney
p-value and the verdict of the one rule (``analysis/verdict.py``). The change is also given in
percent of the baseline's median. A regression gate (``--fail-on-regression PCT``) asks the same
rule with the null moved to PCT% of the baseline's median: a cell fails when its interval lies
wholly above it, that is when the slowdown is surely over PCT.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protolens.analysis.compare import ALPHA, compare_pair
from protolens.analysis.observe import Observation
from protolens.analysis.verdict import ABOVE, Effect, decide

Cell = tuple[str, str, str]
"""(group, arm, condition)."""

COLUMNS = ("group", "arm", "condition", "n_baseline", "n_current", "median_baseline_ms",
           "median_current_ms", "change_ms", "ci_low_ms", "ci_high_ms", "change_pct",
           "ci_low_pct", "ci_high_pct", "p_value", "verdict")


@dataclass(frozen=True)
class Cells:
    """Each side's values per cell."""

    baseline: dict[Cell, list[float]]
    current: dict[Cell, list[float]]

    @property
    def common(self) -> list[Cell]:
        return sorted(self.baseline.keys() & self.current.keys())

    @property
    def only_baseline(self) -> list[Cell]:
        return sorted(self.baseline.keys() - self.current.keys())

    @property
    def only_current(self) -> list[Cell]:
        return sorted(self.current.keys() - self.baseline.keys())


def cells(baseline: Iterable[Observation], current: Iterable[Observation]) -> Cells:
    def by_cell(obs: Iterable[Observation]) -> dict[Cell, list[float]]:
        out: dict[Cell, list[float]] = defaultdict(list)
        for o in obs:
            out[(o.group, o.arm, o.condition)].append(o.value_ms)
        return dict(out)
    return Cells(by_cell(baseline), by_cell(current))


def _pct(x: float | None, ref: float | None) -> float | None:
    return None if x is None or not ref else round(x / ref * 100, 3)


def compare_baseline(c: Cells, alpha: float = ALPHA) -> list[dict[str, Any]]:
    """One row per common cell: current against baseline (``change_ms`` > 0: current slower),
    in ms and in percent of the baseline's median, with the verdict of the one rule."""
    rows = []
    for group, arm, cond in c.common:
        p = compare_pair(group, cond, "current", c.current[(group, arm, cond)], "baseline",
                         c.baseline[(group, arm, cond)], alpha)
        ref = p.median_b_ms
        rows.append({"group": group, "arm": arm, "condition": cond, "n_baseline": p.n_b,
                     "n_current": p.n_a, "median_baseline_ms": ref,
                     "median_current_ms": p.median_a_ms, "change_ms": p.diff_ms,
                     "ci_low_ms": p.ci_low_ms, "ci_high_ms": p.ci_high_ms,
                     "change_pct": _pct(p.diff_ms, ref), "ci_low_pct": _pct(p.ci_low_ms, ref),
                     "ci_high_pct": _pct(p.ci_high_ms, ref), "p_value": p.p_value,
                     "verdict": p.verdict, "outcome": p.outcome, "level": p.level})
    return rows


def regressions(rows: Sequence[Mapping[str, Any]], pct: float) -> list[Mapping[str, Any]]:
    """The rows whose slowdown is surely over ``pct``% of the baseline's median: the one rule's
    ``above`` against the null ``pct``% (an interval the rule refuses, or none, never fails)."""
    out = []
    for r in rows:
        ref = r.get("median_baseline_ms")
        if not ref or r.get("outcome") in ("error", "undecided", "no data"):
            continue
        limit = ref * pct / 100
        e = Effect(r["change_ms"], r["ci_low_ms"], r["ci_high_ms"],
                   int(r["n_baseline"]) + int(r["n_current"]), null=(limit, limit),
                   level=float(r["level"]))
        if decide(e).outcome == ABOVE:
            out.append(r)
    return out


def cell_text(cell: Cell) -> str:
    return " / ".join(cell)
