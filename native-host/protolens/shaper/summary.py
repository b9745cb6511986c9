"""Rows for listings (pure): one per profile, and the shaper's per-flow counters as ground-truth
rows."""

from __future__ import annotations

from typing import Any

from protolens.shaper.records import Profile


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
        "trace_down": link.trace_down.source if link.trace_down else None,
        "trace_up": link.trace_up.source if link.trace_up else None,
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


def truth_rows(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """The shaper's per-flow counters (its ``stats`` answer) as rows, oldest flow first."""
    names = {6: "tcp", 17: "udp", 1: "icmp"}
    rows = []
    for f in stats.get("flows", []):
        row = dict(f)
        row["proto"] = names.get(int(f["proto"]), str(f["proto"]))
        rows.append(row)
    rows.sort(key=lambda r: (r["first_ns"], r["client_port"]))
    return rows
