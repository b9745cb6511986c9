"""Bottleneck queue occupancy during a CC fingerprint probe, like CoNEXT'20 Fig. 2(a): the queue
in packets (percent of its length) against seconds since the request, the first drop marked,
the label and the object in the title. Pure: a stored probe row and timeline in, a figure out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure

from protolens.cc.model import QueueTimeline
from protolens.plots.style import PALETTE, figure


def cc_queue(row: Mapping[str, Any], timeline: QueueTimeline) -> Figure:
    fig, (ax,) = figure(3.5, 2.6)
    end = float(row.get("transfer_ms") or 0) + 500
    pts = [(t / 1000, 100 * q / timeline.buffer_bytes if timeline.buffer_bytes else 0.0)
           for t, q in zip(timeline.times_ms(), timeline.queue_bytes, strict=True)
           if -100 <= t <= end]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=0.9, color=PALETTE[0],
            drawstyle="steps-post", label="queue (shaper, 10 ms)")
    if timeline.first_drop_ms is not None:
        ax.axvline(timeline.first_drop_ms / 1000, color=PALETTE[1], linestyle="--",
                   linewidth=0.8, label=f"first drop {timeline.first_drop_ms / 1000:.2f} s")
    ax.axvline(2.0, color="0.6", linestyle=":", linewidth=0.8, label="2 s (Igor's rule)")
    ax.set_xlabel("time since the request (s)")
    ax.set_ylabel(f"queue occupancy (% of {timeline.buffer_bytes // timeline.packet_bytes} "
                  "packets)")
    ax.set_ylim(0, 105)
    ax.legend(loc="upper right")
    ax.set_title(f"{row.get('host')}: {row.get('label')}\n{int(row.get('bytes') or 0) // 1000} "
                 f"KB, {timeline.packet_bytes} B packets, RTT {row.get('rtt_ms'):g} ms")
    return fig
