"""One row per profile for listings (pure)."""

from __future__ import annotations

from typing import Any

from protolens.shaping.profile import Profile


def summarize(p: Profile) -> dict[str, Any]:
    link = p.link
    row: dict[str, Any] = {
        "name": p.name,
        "rate_down_mbit": link.rate_down_bps / 1e6 or None,
        "rate_up_mbit": link.rate_up_bps / 1e6 or None,
        "rtt_ms": (link.delay_up_ns + link.delay_down_ns) / 1e6,
        "buffer_bytes": link.buffer_bytes or None,
        "loss_down": link.loss_down,
        "loss_up": link.loss_up,
        "jitter_ms": link.jitter_ns / 1e6,
        "schedule": None,
        "ecmp": None,
        "description": p.description,
        "source": p.source,
        "path": p.path,
    }
    if p.schedule is not None:
        row["schedule"] = {"kind": p.schedule.kind, "loop": p.schedule.loop,
                           **{k: list(v) if isinstance(v, tuple) else v
                              for k, v in p.schedule.params}}
    if p.ecmp is not None:
        e = p.ecmp
        row["ecmp"] = {"paths": 2, "path_rate_mbit": e.path_rate_bps / 1e6,
                       "path_buffer_bytes": e.path_buffer_bytes,
                       "cross_traffic_load": e.cross_traffic_load,
                       "cross_traffic_flows": e.cross_traffic_flows,
                       "congested_path": e.congested_path}
    return row
