"""Server congestion window over time (IFIP'18 Fig. 3) from the JSON lines that
``protolens testbed tcpstats --out FILE`` writes (``testbed/tcpstats.py``: one object per socket
and sample with ``t_ns``, ``peer_port``, ``cwnd``, ...)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from protolens.plots.figures import PlotError
from protolens.plots.style import PALETTE, figure


def load_samples(path: Path) -> list[dict[str, Any]]:
    """Read the JSON-lines file; a bad line is a ``PlotError`` naming it."""
    rows: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PlotError(f"{path}: cannot read ({exc})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise PlotError(f"{path}:{n}: not JSON") from None
        if not isinstance(row, dict) or not isinstance(row.get("t_ns"), int) or \
                not isinstance(row.get("peer_port"), int):
            raise PlotError(f"{path}:{n}: expected a tcpstats sample (t_ns, peer_port, cwnd)")
        rows.append(row)
    return rows


def cwnd(samples: Sequence[Mapping[str, Any]], title: str, max_lines: int = 12) -> Figure:
    """One line per connection (client port): cwnd in segments against seconds from the first
    sample; the connections that sent the most bytes first when there are many."""
    series: dict[int, list[tuple[int, int]]] = defaultdict(list)
    sent: dict[int, int] = defaultdict(int)
    for s in samples:
        if s.get("cwnd") is None:
            continue
        series[int(s["peer_port"])].append((int(s["t_ns"]), int(s["cwnd"])))
        sent[int(s["peer_port"])] = max(sent[int(s["peer_port"])], int(s.get("bytes_sent") or 0))
    if not series:
        raise PlotError("no samples with a cwnd")
    t0 = min(t for pts in series.values() for t, _ in pts)
    ports = sorted(series, key=lambda p: (-sent[p], p))[:max_lines]
    fig, (ax,) = figure(3.5, 2.6)
    for i, port in enumerate(sorted(ports)):
        pts = sorted(series[port])
        ax.plot([(t - t0) / 1e9 for t, _ in pts], [c for _, c in pts], linewidth=0.9,
                drawstyle="steps-post", color=PALETTE[i % len(PALETTE)],
                label=f"client port {port}")
    ax.set_xlabel("time since first sample (s)")
    ax.set_ylabel("server cwnd (segments)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", ncols=2 if len(ports) > 4 else 1)
    ax.set_title(title)
    return fig
