"""Campaign figures (pure): rows in, ``Figure`` out. Rows carry ``page, condition, arm,
repetition, bytes`` and the metric columns ``plt_ms``, ``speed_index_ms`` ... (navigations) or
``navigation_id, page, condition, arm, repetition, bytes, share`` (connections); failed and warm
loads are filtered by the query. The per-load figures draw one metric, PLT unless asked."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from protolens.plots.style import PALETTE, arm_color, figure, human_bytes


class PlotError(ValueError):
    """The data cannot make this figure (e.g. an arm is missing); the message says why."""


LABELS = {"plt": ("page load time", "PLT"), "ttfb": ("time to first byte", "TTFB"),
          "fcp": ("first contentful paint", "FCP"), "lcp": ("largest contentful paint", "LCP"),
          "first_image": ("first image", "first image"), "speed_index": ("SpeedIndex", "SI"),
          "first_visual_change": ("first visual change", "FVC"),
          "visual_complete_85": ("visually complete 85%", "VC85"),
          "visual_complete_99": ("visually complete 99%", "VC99"),
          "last_visual_change": ("last visual change", "LVC")}
"""Each metric's axis name and short name (``analysis.observe.METRICS``)."""


def _by(rows: Sequence[Mapping[str, Any]], *keys: str, metric: str = "plt"
        ) -> dict[tuple[Any, ...], list[float]]:
    out: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    column = f"{metric}_ms"
    for r in rows:
        if r.get(column) is not None:
            out[tuple(r[k] for k in keys)].append(float(r[column]))
    return out


def _order(values: Sequence[Any]) -> list[Any]:
    return sorted({v for v in values if v is not None})


def plt_box(rows: Sequence[Mapping[str, Any]], title: str, metric: str = "plt") -> Figure:
    """PLT (or ``metric``) box plots per page and arm, one panel per condition; means marked
    (IFIP'18 Fig. 5)."""
    cells = _by(rows, "condition", "page", "arm", metric=metric)
    name, short = LABELS[metric]
    if not cells:
        raise PlotError(f"no successful loads with a {short} to plot")
    conditions = _order([k[0] for k in cells])
    pages = _order([k[1] for k in cells])
    arms = _order([k[2] for k in cells])
    fig, axes = figure(max(3.5, 1.2 + 0.9 * len(pages) * len(conditions)), 3.0,
                       ncols=len(conditions))
    width = 0.8 / len(arms)
    for ax, cond in zip(axes, conditions, strict=True):
        for j, arm in enumerate(arms):
            data, pos = [], []
            for i, page in enumerate(pages):
                values = cells.get((cond, page, arm))
                if values:
                    data.append(np.asarray(values) / 1000)
                    pos.append(i - 0.4 + width * (j + 0.5))
            if not data:
                continue
            color = arm_color(arm, arms)
            ax.boxplot(data, positions=pos, widths=width * 0.85, patch_artist=True,
                       showmeans=True, manage_ticks=False,
                       boxprops={"facecolor": color, "alpha": 0.6, "linewidth": 0.6},
                       medianprops={"color": "black", "linewidth": 0.8},
                       meanprops={"marker": "D", "markerfacecolor": "white",
                                  "markeredgecolor": "black", "markersize": 3},
                       flierprops={"markersize": 2})
        ax.set_xticks(range(len(pages)), pages, rotation=20, ha="right")
        ax.set_xlim(-0.6, len(pages) - 0.4)
        ax.set_title(f"condition: {cond}")
        ax.set_xlabel("page")
        ax.set_ylabel(f"{name} (s)")
        ax.set_ylim(bottom=0)
    handles = [Patch(facecolor=arm_color(a, arms), alpha=0.6, label=a) for a in arms]
    fig.legend(handles=handles, title="arm (◇ mean)", loc="outside right upper")
    fig.suptitle(title)
    return fig


def byte_shares(rows: Sequence[Mapping[str, Any]], title: str, limit: int = 40) -> Figure:
    """One stacked bar per navigation: each connection's share of its bytes, largest at the
    bottom (IFIP'18 Fig. 4c)."""
    navs: dict[str, list[float]] = defaultdict(list)
    labels: dict[str, str] = {}
    for r in rows:
        nid = r["navigation_id"]
        navs[nid].append(float(r["share"]))
        labels[nid] = f"{r['page']} {r['arm']} {r['condition']} #{r['repetition']}"
    if not navs:
        raise PlotError("no connections recorded for these loads")
    order = sorted(navs, key=lambda n: (labels[n], n))[:limit]
    fig, (ax,) = figure(max(4.0, 1.0 + 0.22 * len(order)), 3.2)
    ranks = max(len(navs[n]) for n in order)
    cmap = colormaps["viridis"]

    def color(rank: int) -> Any:
        return cmap(rank / max(1, ranks - 1))

    for x, nid in enumerate(order):
        bottom = 0.0
        for rank, share in enumerate(sorted(navs[nid], reverse=True)):
            ax.bar(x, share * 100, bottom=bottom, width=0.8, linewidth=0.3, edgecolor="white",
                   color=color(rank))
            bottom += share * 100
    ax.set_xticks(range(len(order)), [labels[n] for n in order], rotation=70, ha="right")
    ax.set_ylabel("share of the page's bytes (%)")
    ax.set_xlabel("page load (page, arm, condition, repetition)")
    ax.set_ylim(0, 100)
    shown = sorted({0, min(1, ranks - 1), ranks // 2, ranks - 1})
    fig.legend(handles=[Patch(color=color(i), label=f"#{i + 1}") for i in shown],
               title="connection,\nby bytes", loc="outside right upper")
    ax.set_title(title)
    return fig


def page_deltas(rows: Sequence[Mapping[str, Any]], arm_a: str, arm_b: str, metric: str = "plt"
                ) -> dict[str, list[tuple[str, float, float, float]]]:
    """Per condition: (page, median PLT (or ``metric``) of a, of b, median page bytes) for pages
    with both."""
    cells = _by(rows, "condition", "page", "arm", metric=metric)
    sizes: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.get("bytes") is not None:
            sizes[r["page"]].append(float(r["bytes"]))
    out: dict[str, list[tuple[str, float, float, float]]] = defaultdict(list)
    for (cond, page, arm), values in sorted(cells.items()):
        if arm != arm_a or not cells.get((cond, page, arm_b)):
            continue
        out[cond].append((page, float(np.median(values)),
                          float(np.median(cells[(cond, page, arm_b)])),
                          float(np.median(sizes[page])) if sizes[page] else 0.0))
    if not out:
        raise PlotError(f"no page was loaded with both arms {arm_a} and {arm_b}")
    return dict(out)


def baseline_rows(baseline: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
                  ) -> list[dict[str, Any]]:
    """Two campaigns' loads as ``delta_cdf`` reads two arms: each page x arm is one "page", and
    the two sides (``baseline``, ``current``) its arms."""
    return [{**r, "page": f"{r['page']} {r['arm']}", "arm": side}
            for side, rows in (("baseline", baseline), ("current", current)) for r in rows]


def delta_cdf(rows: Sequence[Mapping[str, Any]], arm_a: str, arm_b: str, title: str,
              metric: str = "plt") -> Figure:
    """CDF over pages of median PLT(a) - median PLT(b) (or of ``metric``: CoNEXT'20 Fig. 2(b)
    draws SpeedIndex too), one line per condition (CoNEXT'20 Fig. 2b)."""
    deltas = page_deltas(rows, arm_a, arm_b, metric)
    short = LABELS[metric][1]
    fig, (ax,) = figure(3.5, 2.6)
    for i, (cond, items) in enumerate(sorted(deltas.items())):
        d = np.sort([(a - b) / 1000 for _, a, b, _ in items])
        y = np.arange(1, len(d) + 1) / len(d)
        ax.step(np.concatenate([[d[0]], d]), np.concatenate([[0.0], y]), where="post",
                color=PALETTE[i % len(PALETTE)], label=f"{cond} ({len(d)} pages)")
    ax.axvline(0, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel(f"{short}({arm_a}) - {short}({arm_b}) per page, medians (s)")
    ax.set_ylabel("CDF of pages")
    ax.set_ylim(0, 1.02)
    ax.legend(title="condition", loc="lower right")
    ax.set_title(title)
    return fig


def speedup(rows: Sequence[Mapping[str, Any]], arm_a: str, arm_b: str, title: str,
            metric: str = "plt") -> Figure:
    """Per page, sorted by size: PLT (or ``metric``) reduction of ``arm_b`` against ``arm_a`` in
    percent (positive: b faster), one bar group per condition (IFIP'18 Fig. 5c)."""
    deltas = page_deltas(rows, arm_a, arm_b, metric)
    short = LABELS[metric][1]
    sizes = {p: s for items in deltas.values() for p, _, _, s in items}
    pages = sorted(sizes, key=lambda p: (sizes[p], p))
    conds = sorted(deltas)
    fig, (ax,) = figure(max(3.5, 1.0 + 0.5 * len(pages) * len(conds)), 2.8)
    width = 0.8 / len(conds)
    for j, cond in enumerate(conds):
        got = {p: (a - b) / a * 100 for p, a, b, _ in deltas[cond] if a > 0}
        xs = [i - 0.4 + width * (j + 0.5) for i, p in enumerate(pages) if p in got]
        ax.bar(xs, [got[p] for p in pages if p in got], width=width * 0.9,
               color=PALETTE[j % len(PALETTE)], label=cond)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(pages)), [f"{p}\n{human_bytes(sizes[p])}" for p in pages],
                  rotation=20, ha="right")
    ax.set_xlabel("page (sorted by size)")
    ax.set_ylabel(f"{short} reduction of {arm_b} vs {arm_a} (%)")
    ax.legend(title="condition")
    ax.set_title(title)
    return fig
