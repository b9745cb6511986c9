"""Expand a profile into the shaper's timeline of parameter changes. Pure and deterministic: the
random schedules (cellular, jitter) are drawn from ``random.Random(seed)``.

A ``Step`` sets one parameter of one or both directions at an offset from the moment the profile
is applied; the shaper (native-host/shaper/model.c) replays them, looped or once.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from protolens.shaper.records import Link, Profile

UP, DOWN, BOTH = "up", "down", "both"
CROSS_CLIENT_IP_INT = (198 << 24) | (18 << 16) | (1 << 8) | 10
"""198.18.1.10, the client-side address of ECMP cross traffic (testbed/topology.py)."""


@dataclass(frozen=True)
class Step:
    at_ns: int
    dir: str
    """``up``, ``down`` or ``both``."""
    key: str
    """A shaper parameter name (model.h ``enum sh_key``)."""
    value: float


@dataclass(frozen=True)
class Timeline:
    steps: tuple[Step, ...]
    loop_ns: int
    """0 = play once and keep the last values."""
    seed: int


def expand(profile: Profile) -> Timeline:
    steps = _static(profile)
    loop_ns = 0
    seed = 1
    spec = profile.schedule
    if spec is not None:
        seed = int(spec.get("seed", 1))
        gen = {"steps": _steps, "slowdown": _slowdown, "cellular": _cellular,
               "jitter": _jitter}[spec.kind]
        more, period_ns = gen(profile.link, dict(spec.params))
        steps += more
        if spec.loop:
            if period_ns <= 0:
                raise ValueError("a looped schedule needs a period (period_ms or duration_s)")
            if any(s.at_ns >= period_ns for s in more):
                raise ValueError("every step must come before the loop period")
            loop_ns = period_ns
    return Timeline(tuple(sorted(steps, key=lambda s: s.at_ns)), loop_ns, seed)


def plays_once(profile: Profile) -> bool:
    """Whether ``profile``'s schedule plays once (``loop = false``): it changes the link over its
    first seconds and then keeps its last values, so only what runs in those seconds sees it."""
    return profile.schedule is not None and not profile.schedule.loop


def _static(p: Profile) -> list[Step]:
    link = p.link
    s = [
        Step(0, UP, "rate_bps", link.rate_up_bps), Step(0, DOWN, "rate_bps", link.rate_down_bps),
        Step(0, UP, "delay_ns", link.delay_up_ns), Step(0, DOWN, "delay_ns", link.delay_down_ns),
        Step(0, BOTH, "buffer_bytes", link.buffer_bytes),
        Step(0, UP, "loss", link.loss_up), Step(0, DOWN, "loss", link.loss_down),
        Step(0, BOTH, "jitter_ns", link.jitter_ns),
    ]
    ge = link.gilbert_elliott
    if ge is not None:
        s += [Step(0, BOTH, "ge", 1), Step(0, BOTH, "ge_p", ge.p), Step(0, BOTH, "ge_r", ge.r),
              Step(0, BOTH, "ge_bad_loss", ge.bad_loss),
              Step(0, BOTH, "ge_good_loss", ge.good_loss)]
    if p.ecmp is not None:
        s += [Step(0, BOTH, "paths", 2), Step(0, BOTH, "path_rate_bps", p.ecmp.path_rate_bps),
              Step(0, BOTH, "path_buffer_bytes", p.ecmp.path_buffer_bytes),
              # cross traffic comes "from other nodes" (IFIP'18 Fig. 1): it loads only its path
              Step(0, BOTH, "cross_ip", CROSS_CLIENT_IP_INT)]
    return s


def _rtt_steps(at: int, rtt_ns: int) -> list[Step]:
    return [Step(at, UP, "delay_ns", rtt_ns // 2), Step(at, DOWN, "delay_ns", rtt_ns - rtt_ns // 2)]


def _steps(link: Link, sp: dict[str, Any]) -> tuple[list[Step], int]:
    out: list[Step] = []
    for st in sp["steps"]:
        d = dict(st)
        at = round(d["at_ms"] * 1e6)
        for key, value in d.items():
            if key == "at_ms":
                continue
            if key == "rtt_ms":
                out += _rtt_steps(at, round(value * 1e6))
            elif key in ("rate_mbit", "rate_up_mbit", "rate_down_mbit"):
                direction = {"rate_mbit": BOTH, "rate_up_mbit": UP, "rate_down_mbit": DOWN}[key]
                out.append(Step(at, direction, "rate_bps", round(value * 1e6)))
            elif key in ("loss", "loss_up", "loss_down"):
                direction = {"loss": BOTH, "loss_up": UP, "loss_down": DOWN}[key]
                out.append(Step(at, direction, "loss", float(value)))
            elif key == "jitter_ms":
                out.append(Step(at, BOTH, "jitter_ns", round(value * 1e6)))
            elif key == "buffer_bytes":
                out.append(Step(at, BOTH, "buffer_bytes", int(value)))
    return out, round(float(sp.get("period_ms", 0)) * 1e6)


def _slowdown(link: Link, sp: dict[str, Any]) -> tuple[list[Step], int]:
    """CoNEXT'20 Sec. 2 "continuous-slowdown": +15 ms every 100 ms up to 300 ms."""
    step = _positive(sp, "step_ms", 100)
    inc = _positive(sp, "rtt_increment_ms", 15)
    top = _positive(sp, "max_rtt_ms", 300)
    rtt = (link.delay_up_ns + link.delay_down_ns) / 1e6
    out: list[Step] = []
    k = 1
    while rtt < top:
        rtt = min(top, rtt + inc)
        out += _rtt_steps(round(k * step * 1e6), round(rtt * 1e6))
        k += 1
    return out, round(k * step * 1e6)


def _cellular(link: Link, sp: dict[str, Any]) -> tuple[list[Step], int]:
    """Cellular poster Sec. 2.1: every 70 ms draw RTT and bandwidth; a loss cluster (5-15% of
    packets inside one 70 ms interval) starts when the drawn time gap has passed."""
    rng = random.Random(int(sp.get("seed", 1)))
    step_ns = round(_positive(sp, "step_ms", 70) * 1e6)
    duration_ns = round(_positive(sp, "duration_s", 60) * 1e9)
    rtt = _range(sp, "rtt_ms")
    rate = _range(sp, "rate_mbit")
    gap = _range(sp, "gap_ms")
    closs = _range(sp, "cluster_loss")
    if closs[1] > 1:
        raise ValueError("cluster_loss is a fraction (0.05 = 5%)")
    cluster_ns = round(float(sp.get("cluster_ms", 70)) * 1e6)
    out: list[Step] = []
    next_cluster = round(rng.uniform(*gap) * 1e6)
    cluster_end = -1
    for at in range(0, duration_ns, step_ns):
        out += _rtt_steps(at, round(rng.uniform(*rtt) * 1e6))
        out.append(Step(at, BOTH, "rate_bps", round(rng.uniform(*rate) * 1e6)))
        if at >= next_cluster and cluster_end < 0:
            cluster_end = at + cluster_ns
            out.append(Step(at, DOWN, "loss", round(rng.uniform(*closs), 4)))
        elif 0 <= cluster_end <= at:
            out.append(Step(at, DOWN, "loss", link.loss_down))
            next_cluster = at + round(rng.uniform(*gap) * 1e6)
            cluster_end = -1
    return out, duration_ns


def _jitter(link: Link, sp: dict[str, Any]) -> tuple[list[Step], int]:
    """CoNEXT'20 Sec. 2 "jitter": the queue's delay is re-drawn from N(mean, stdev) every interval
    (dummynet, Box-Muller), applied to the downlink; packets never reorder."""
    rng = random.Random(int(sp.get("seed", 1)))
    interval_ns = round(_positive(sp, "interval_ms", 10) * 1e6)
    duration_ns = round(_positive(sp, "duration_s", 60) * 1e9)
    mean = float(sp.get("mean_ms", 50))
    stdev = float(sp.get("stdev_ms", 70))
    if mean < 0 or stdev < 0:
        raise ValueError("mean_ms and stdev_ms must be >= 0")
    out: list[Step] = []
    for at in range(0, duration_ns, interval_ns):
        u1, u2 = 1.0 - rng.random(), rng.random()
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        out.append(Step(at, DOWN, "delay_ns", max(0, round((mean + stdev * z) * 1e6))))
    return out, duration_ns


def _positive(sp: dict[str, Any], key: str, default: float) -> float:
    x = sp.get(key, default)
    if isinstance(x, bool) or not isinstance(x, int | float) or x <= 0:
        raise ValueError(f"{key} must be a positive number, got {x!r}")
    return float(x)


def _range(sp: dict[str, Any], key: str) -> tuple[float, float]:
    x = sp.get(key)
    if (not isinstance(x, tuple | list) or len(x) != 2
            or not all(isinstance(i, int | float) and not isinstance(i, bool) for i in x)
            or not 0 <= x[0] <= x[1]):
        raise ValueError(f"{key} must be a [low, high] pair with 0 <= low <= high, got {x!r}")
    return float(x[0]), float(x[1])
