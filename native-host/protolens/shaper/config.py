"""Profile -> the shaper's config text (native-host/shaper/config.c): the schedule's steps, then
any delivery traces. Pure."""

from __future__ import annotations

from protolens.shaper.calibration import Calibration
from protolens.shaper.records import Profile
from protolens.shaper.schedule import BOTH, DOWN, UP, Step, expand

_INT_KEYS = {"rate_bps", "buffer_bytes", "delay_ns", "jitter_ns", "paths", "path_rate_bps",
             "path_buffer_bytes", "ge", "cross_ip"}


_CHUNK = 1000
"""Trace opportunities per config line (config.c appends lines of one direction)."""


def shaper_config(profile: Profile, calibration: Calibration | None = None) -> str:
    """``calibration``: what the testbed's path adds to a round trip by itself
    (calibration.py); taken off every configured delay, half from each direction."""
    tl = expand(profile)
    lines = [f"# protolens shaper config for profile {profile.name}",
             f"name {_token(profile.name)}", f"seed {tl.seed}"]
    if tl.loop_ns:
        lines.append(f"loop_ns {tl.loop_ns}")
    # Group the steps of one instant and direction on one line.
    grouped: dict[tuple[int, str], list[str]] = {}
    for s in _less_delay(tl.steps, calibration):
        value = str(int(s.value)) if s.key in _INT_KEYS else repr(float(s.value))
        grouped.setdefault((s.at_ns, s.dir), []).append(f"{s.key}={value}")
    for (at, direction), kvs in grouped.items():
        lines.append(f"at {at} {direction} {' '.join(kvs)}")
    for direction, trace in (("up", profile.link.trace_up), ("down", profile.link.trace_down)):
        if trace is not None:
            lines.append(f"# {direction} trace {trace.source}: {len(trace.opportunities_ms)} "
                         f"opportunities, {trace.period_ms} ms loop")
            ops = trace.opportunities_ms
            lines += [f"trace {direction} {' '.join(map(str, ops[i:i + _CHUNK]))}"
                      for i in range(0, len(ops), _CHUNK)]
    return "\n".join(lines) + "\n"


def _less_delay(steps: tuple[Step, ...], cal: Calibration | None) -> list[Step]:
    if cal is None:
        return list(steps)
    out: list[Step] = []
    for s in steps:
        if s.key != "delay_ns":
            out.append(s)
            continue
        # a step sets one direction's delay: read it as half of a symmetric RTT
        path = cal.path_rtt_ns(2 * s.value)
        cut = {UP: path // 2, DOWN: path - path // 2}
        for d in ((UP, DOWN) if s.dir == BOTH else (s.dir,)):
            out.append(Step(s.at_ns, d, s.key, max(0.0, s.value - cut[d])))
    return out


def _token(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "unnamed"
