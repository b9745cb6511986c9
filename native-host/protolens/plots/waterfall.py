"""Drawing a connection waterfall (plots/waterfall_series.py) with matplotlib, pure: series in,
``Figure`` out. Each request: a light bar from start to first byte (waiting), a solid bar from
first byte to end (receiving) and a tick at the first byte; milestones as dashed vertical lines;
host groups separated by a rule."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from protolens.plots.style import ARM_COLORS
from protolens.plots.waterfall_series import Waterfall

OTHER = "#888888"
MILESTONE_COLORS = {"TTFB": "#444444", "FCP": "#1f78b4", "LCP": "#33a02c", "load": "#e31a1c"}
BAR_HEIGHT = 0.6


def waterfall_figure(wf: Waterfall) -> Figure:
    n = max(1, len(wf.rows))
    fig = Figure(figsize=(10.0, 1.2 + 0.32 * n), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for y, row in enumerate(wf.rows):
        color = ARM_COLORS.get(row.protocol, OTHER)
        for b in row.bars:
            first = b.first_byte_ms if b.first_byte_ms is not None else b.start_ms
            first = min(max(first, b.start_ms), b.end_ms)
            if first > b.start_ms:
                ax.broken_barh([(b.start_ms, first - b.start_ms)], (y - BAR_HEIGHT / 2, BAR_HEIGHT),
                               facecolors=color, alpha=0.3, linewidth=0)
            ax.broken_barh([(first, max(b.end_ms - first, 0.5))],
                           (y - BAR_HEIGHT / 2, BAR_HEIGHT),
                           facecolors="white" if b.failed else color,
                           # hatch lines take the edge colour: white stripes mark upstream rows
                           edgecolors="white" if row.upstream else color,
                           linewidth=0.6 if b.failed else 0,
                           hatch="///" if row.upstream else None)
            if b.first_byte_ms is not None:
                ax.plot([first, first], [y - BAR_HEIGHT / 2, y + BAR_HEIGHT / 2], color="black",
                        linewidth=0.8)
            if b.setup is not None:  # the connection's set-up, a thin dark band on the row
                ax.broken_barh([(b.setup[0], max(b.setup[1] - b.setup[0], 0.1))],
                               (y - BAR_HEIGHT / 6, BAR_HEIGHT / 3), facecolors="#333333",
                               linewidth=0)
        if y > 0 and wf.rows[y - 1].group != row.group or (
                y > 0 and row.upstream != wf.rows[y - 1].upstream):
            ax.axhline(y - 0.5, color="#cccccc", linewidth=0.6)
    for name, t in wf.milestones:
        ax.axvline(t, color=MILESTONE_COLORS.get(name, "black"), linestyle="--", linewidth=0.9)
        ax.annotate(name, (t, -0.6), fontsize=7, ha="center", va="bottom",
                    color=MILESTONE_COLORS.get(name, "black"), annotation_clip=False)
    ax.set_yticks(range(len(wf.rows)), [row.label for row in wf.rows], fontsize=7)
    ax.set_ylim(len(wf.rows) - 0.5, -1.0)
    ax.set_xlim(0, max(wf.end_ms * 1.03, 1.0))
    ax.set_xlabel("ms from navigation start")
    ax.set_title(wf.title, fontsize=9, loc="left")
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)
    families = sorted({row.protocol for row in wf.rows})
    handles: list[Patch | Line2D] = [Patch(color=ARM_COLORS.get(f, OTHER), label=f)
                                     for f in families]
    handles.append(Line2D([], [], color="black", linewidth=0.8, label="first byte"))
    handles.append(Patch(color="#333333", label="connection set-up"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    return fig
