"""Fairness figures (pure): IFIP'18 Fig. 7, each protocol's share of the bottleneck over time
per pair, and a summary of the mean share per side with its 95% interval. Rows are
``store.fairness.fairness_rows``."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from protolens.lab.fairness import summary_rows
from protolens.plots.figures import PlotError
from protolens.plots.style import arm_color, figure


def shares_by_pair(rows: Sequence[Mapping[str, Any]]
                   ) -> dict[str, dict[str, tuple[str, list[float]]]]:
    """Per pair and side: (arm, mean share per 100 ms bin over repetitions), bins where either
    side had bytes."""
    reps: dict[tuple[str, int], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in rows:
        reps[(r["pair"], int(r["repetition"]))][r["side"]] = r
    acc: dict[str, dict[str, list[list[float]]]] = defaultdict(lambda: defaultdict(list))
    arms: dict[tuple[str, str], str] = {}
    for (pair, _), sides in sorted(reps.items()):
        if set(sides) != {"a", "b"}:
            continue
        a, b = (np.asarray(sides[s]["series"], dtype=float) for s in ("a", "b"))
        total = a + b
        with np.errstate(invalid="ignore", divide="ignore"):
            for side, mine in (("a", a), ("b", b)):
                acc[pair][side].append(list(np.where(total > 0, mine / total, np.nan)))
                arms[(pair, side)] = str(sides[side]["arm"])
    out: dict[str, dict[str, tuple[str, list[float]]]] = {}
    for pair, by_side in acc.items():
        out[pair] = {}
        for side, series in by_side.items():
            width = max(len(s) for s in series)
            padded = np.full((len(series), width), np.nan)
            for i, s in enumerate(series):
                padded[i, :len(s)] = s
            with warnings.catch_warnings():  # a bin empty in every repetition stays NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(padded, axis=0)
            out[pair][side] = (arms[(pair, side)], [float(v) for v in mean])
    return out


def fairness(rows: Sequence[Mapping[str, Any]], title: str) -> Figure:
    """One panel per pair (share over time, mean over repetitions), then the summary panel."""
    pairs = shares_by_pair(rows)
    if not pairs:
        raise PlotError("no fairness repetition with both sides to plot")
    fig, axes = figure(2.6 * (len(pairs) + 1), 2.6, ncols=len(pairs) + 1)
    for ax, (pair, sides) in zip(axes, sorted(pairs.items()), strict=False):
        arms = [sides[s][0] for s in ("a", "b")]
        for side in ("a", "b"):
            arm, share = sides[side]
            t = np.arange(len(share)) * 0.1
            ax.plot(t, share, label=f"{arm} ({side})", color=arm_color(arm, arms) if
                    arms[0] != arms[1] or side == "a" else "#444444", linewidth=1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("bandwidth share")
        ax.set_title(pair)
        ax.legend(loc="lower left", fontsize=7, framealpha=0.8)
    summary = summary_rows(rows)
    ax = axes[-1]
    labels = [f"{s['pair']}: {s['arm']} ({s['side']})" for s in summary]
    means = [float(s["share_mean"]) if s["share_mean"] is not None else np.nan for s in summary]
    lows = [m - float(s["share_ci_low"]) if s["share_ci_low"] is not None else 0.0
            for m, s in zip(means, summary, strict=True)]
    highs = [float(s["share_ci_high"]) - m if s["share_ci_high"] is not None else 0.0
             for m, s in zip(means, summary, strict=True)]
    # horizontal bars: the pair and side labels stay readable however many pairs there are
    ax.barh(range(len(labels)), means, xerr=[lows, highs], capsize=3, color="#999999")
    ax.axvline(0.5, color="#444444", linewidth=0.6, linestyle="--")
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share")
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    ax.grid(False, axis="y")
    ax.set_title("mean share (95% CI)")
    fig.suptitle(title)
    return fig
