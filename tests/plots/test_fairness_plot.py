"""IFIP'18 Fig. 7 as ``protolens plot fairness`` draws it: one panel per pair whose two lines are
the sides' mean share per 100 ms bin, and a summary panel whose bars are ``summary_rows``' mean
shares, labelled with the pair, arm and side. Rows are shaped like the store's
(``store.fairness.fairness_rows``), with series whose shares are known by construction."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from protolens.lab.fairness import summary_rows
from protolens.plots.fairness import fairness, shares_by_pair
from protolens.plots.figures import PlotError


def _rows() -> list[dict[str, Any]]:
    """Two pairs x 3 repetitions; h1 gets 3/4 of every bin against h2, h3 and h2-parallel:2
    split evenly; the last repetition of h1:h2 runs one bin longer (only h1 then)."""
    out = []
    for rep in (1, 2, 3):
        for pair, a, b, sa, sb in (("h1:h2", "h1", "h2", [300] * 10, [100] * 10),
                                   ("h2-parallel:2:h3", "h2-parallel:2", "h3", [200] * 8,
                                    [200] * 8)):
            if pair == "h1:h2" and rep == 3:
                sa, sb = [*sa, 50], [*sb, 0]
            total = sum(sa) + sum(sb)
            for side, arm, series in (("a", a, sa), ("b", b, sb)):
                out.append({"pair": pair, "repetition": rep, "side": side, "arm": arm,
                            "series": series, "share": sum(series) / total, "mbps": 1.0,
                            "jain": 0.9, "plt_ms": 1000.0, "connections": 1, "bytes": 1})
    return out


def test_pair_panels_draw_each_sides_share_per_bin() -> None:
    rows = _rows()
    fig = fairness(rows, "t")
    axes = fig.axes
    assert len(axes) == 3  # two pairs and the summary
    by_title = {ax.get_title(): ax for ax in axes}
    lines = {ln.get_label(): ln for ln in by_title["h1:h2"].get_lines()}
    assert set(lines) == {"h1 (a)", "h2 (b)"}
    a = np.asarray(lines["h1 (a)"].get_ydata(), dtype=float)
    b = np.asarray(lines["h2 (b)"].get_ydata(), dtype=float)
    assert np.allclose(a[:10], 0.75) and np.allclose(b[:10], 0.25)
    assert np.allclose(a[:10] + b[:10], 1.0)
    assert np.allclose(np.asarray(lines["h1 (a)"].get_xdata())[:3], [0.0, 0.1, 0.2])
    even = {ln.get_label(): ln for ln in by_title["h2-parallel:2:h3"].get_lines()}
    assert np.allclose(np.asarray(even["h3 (b)"].get_ydata(), dtype=float), 0.5)
    assert set(shares_by_pair(rows)) == {"h1:h2", "h2-parallel:2:h3"}


def test_summary_bars_are_the_mean_shares_labelled_by_pair_and_side() -> None:
    rows = _rows()
    summary = summary_rows(rows)
    ax = fairness(rows, "t").axes[-1]
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([float(s["share_mean"]) for s in summary])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{s['pair']}: {s['arm']} ({s['side']})" for s in summary]
    assert "h1:h2: h1 (a)" in labels


def test_no_complete_repetition_is_a_plot_error() -> None:
    with pytest.raises(PlotError):
        fairness([], "t")
