"""Shared figure set-up: sizes and fonts for a two-column paper, one colour per arm."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

ARM_COLORS = {"h1": "#1b9e77", "h2": "#d95f02", "h3": "#7570b3"}
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#666666")


def arm_color(arm: str, arms: list[str]) -> str:
    return ARM_COLORS.get(arm) or PALETTE[arms.index(arm) % len(PALETTE)]


def figure(width_in: float = 7.0, height_in: float = 3.0, ncols: int = 1
           ) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    for ax in axes:
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        ax.set_axisbelow(True)
    return fig, axes


def human_bytes(n: float) -> str:
    for unit, size in (("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"
