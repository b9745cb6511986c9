"""A link profile's TOML text validated into the frozen records of ``records.py``.

Pure: TOML text in, a ``Profile`` out, or a ``ProfileError`` with a one-line message. Time-varying
profiles keep their generator parameters; ``schedule.py`` expands them into steps (and that
expansion is run here once, so a generator's bad parameter is a profile error too). Finding a
profile by name is ``catalogue.py``'s job.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from protolens.shaper.records import Ecmp, GilbertElliott, Link, Profile, ScheduleSpec, Trace
from protolens.shaper.schedule import expand
from protolens.shaper.trace import TraceError, parse_mahimahi

TraceReader = Callable[[str], tuple[str, str]]
"""A trace file name as written in a profile -> (its resolved path, its text); raises OSError."""

SCHEDULE_KINDS = ("steps", "slowdown", "cellular", "jitter")


class ProfileError(ValueError):
    """A profile file that cannot be used; the message is one line naming the file and the key."""


_TOP = {"name", "description", "source", "link", "gilbert_elliott", "ecmp", "schedule",
        "trace"}
_TRACE = {"down", "up"}
_LINK = {"rate_mbit", "rate_up_mbit", "rate_down_mbit", "rtt_ms", "buffer_bytes", "loss",
         "loss_up", "loss_down", "jitter_ms"}
_GE = {"p", "r", "bad_loss", "good_loss"}
_ECMP = {"path_rate_mbit", "path_buffer_bytes", "cross_traffic_load", "cross_traffic_flows",
         "congested_path"}
_SCHEDULE: dict[str, set[str]] = {
    "steps": {"kind", "loop", "period_ms", "steps"},
    "slowdown": {"kind", "loop", "step_ms", "rtt_increment_ms", "max_rtt_ms"},
    "cellular": {"kind", "loop", "seed", "step_ms", "duration_s", "rtt_ms", "rate_mbit",
                 "gap_ms", "cluster_loss", "cluster_ms"},
    "jitter": {"kind", "loop", "seed", "interval_ms", "duration_s", "mean_ms", "stdev_ms"},
}
STEP_KEYS = {"at_ms", "rate_mbit", "rate_up_mbit", "rate_down_mbit", "rtt_ms", "buffer_bytes",
             "loss", "loss_up", "loss_down", "jitter_ms"}


def parse_profile(text: str, where: str = "<profile>", default_name: str = "custom",
                  read_trace: TraceReader | None = None) -> Profile:
    """``read_trace`` reads the Mahimahi files a ``[trace]`` table names (catalogue.py)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{where}: not valid TOML: {e}") from None
    v = _V(where)
    v.keys(data, _TOP, "")
    link_t = v.table(data, "link")
    v.keys(link_t, _LINK, "link")
    link = _link(v, link_t, data)
    if "trace" in data:
        link = _traces(v, link, v.table(data, "trace"), read_trace)
    ecmp = None
    if "ecmp" in data:
        et = v.table(data, "ecmp")
        v.keys(et, _ECMP, "ecmp")
        ecmp = Ecmp(
            path_rate_bps=v.mbit(et, "path_rate_mbit", "ecmp", required=True),
            path_buffer_bytes=v.integer(et, "path_buffer_bytes", "ecmp", link.buffer_bytes),
            cross_traffic_load=v.fraction(et, "cross_traffic_load", "ecmp", 0.0, upper=0.99),
            cross_traffic_flows=v.integer(et, "cross_traffic_flows", "ecmp", 8, lo=1, hi=64),
            congested_path=v.integer(et, "congested_path", "ecmp", 1, lo=0, hi=1),
        )
    schedule = None
    if "schedule" in data:
        s = v.table(data, "schedule")
        kind = s.get("kind")
        if kind not in SCHEDULE_KINDS:
            raise ProfileError(f"{where}: schedule.kind must be one of {', '.join(SCHEDULE_KINDS)},"
                               f" got {kind!r}")
        v.keys(s, _SCHEDULE[kind], "schedule")
        loop = s.get("loop", kind in ("cellular", "jitter"))
        if not isinstance(loop, bool):
            raise ProfileError(f"{where}: schedule.loop must be true or false")
        if kind == "steps":
            _check_steps(v, s)
        schedule = ScheduleSpec(kind, loop, tuple(sorted((k, _freeze(x)) for k, x in s.items()
                                                        if k not in ("kind", "loop"))))
    name = data.get("name", default_name)
    for key in ("name", "description", "source"):
        if key in data and not isinstance(data[key], str):
            raise ProfileError(f"{where}: {key} must be a string")
    profile = Profile(name=str(name), description=str(data.get("description", "")),
                      source=str(data.get("source", "user-defined")), link=link, ecmp=ecmp,
                      schedule=schedule, path=where)
    try:
        expand(profile)
    except (KeyError, TypeError, ValueError) as e:
        raise ProfileError(f"{where}: schedule: {e}") from None
    return profile


def _freeze(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_freeze(i) for i in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(i)) for k, i in x.items()))
    return x


def _link(v: _V, t: dict[str, Any], data: dict[str, Any]) -> Link:
    rate = v.mbit(t, "rate_mbit", "link", default=0)
    rtt_ns = v.ms(t, "rtt_ms", "link")
    loss = v.fraction(t, "loss", "link", 0.0)
    ge = None
    if "gilbert_elliott" in data:
        g = v.table(data, "gilbert_elliott")
        v.keys(g, _GE, "gilbert_elliott")
        ge = GilbertElliott(p=v.fraction(g, "p", "gilbert_elliott", None),
                            r=v.fraction(g, "r", "gilbert_elliott", None),
                            bad_loss=v.fraction(g, "bad_loss", "gilbert_elliott", 1.0),
                            good_loss=v.fraction(g, "good_loss", "gilbert_elliott", 0.0))
    return Link(
        rate_up_bps=v.mbit(t, "rate_up_mbit", "link", default=rate),
        rate_down_bps=v.mbit(t, "rate_down_mbit", "link", default=rate),
        delay_up_ns=rtt_ns // 2,
        delay_down_ns=rtt_ns - rtt_ns // 2,
        buffer_bytes=v.integer(t, "buffer_bytes", "link", 0, lo=0, hi=1 << 32),
        loss_up=v.fraction(t, "loss_up", "link", loss),
        loss_down=v.fraction(t, "loss_down", "link", loss),
        jitter_ns=v.ms(t, "jitter_ms", "link"),
        gilbert_elliott=ge,
    )


def _traces(v: _V, link: Link, t: dict[str, Any], read: TraceReader | None) -> Link:
    v.keys(t, _TRACE, "trace")
    found: dict[str, Trace | None] = {"down": link.trace_down, "up": link.trace_up}
    for direction in ("down", "up"):
        if direction not in t:
            continue
        name = t[direction]
        if not isinstance(name, str) or not name:
            raise v.fail(f"trace.{direction} must be a trace file name, got {name!r}")
        if read is None:
            raise v.fail(f"trace.{direction}: trace files can only be read from a profile file")
        found[direction] = read_trace_file(name, read)
    return replace(link, trace_down=found["down"], trace_up=found["up"])


def read_trace_file(name: str, read: TraceReader) -> Trace:
    """Read and parse one Mahimahi trace; errors become one-line ``ProfileError``s."""
    try:
        path, text = read(name)
    except OSError as e:
        raise ProfileError(f"cannot read trace {name}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        msg = f"{name}: not a text file (a Mahimahi trace is one number a line)"
        raise ProfileError(msg) from None
    try:
        return parse_mahimahi(text, path)
    except TraceError as e:
        raise ProfileError(str(e)) from None


def _check_steps(v: _V, s: dict[str, Any]) -> None:
    steps = s.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ProfileError(f"{v.where}: schedule.steps must be a non-empty list of tables")
    for i, st in enumerate(steps):
        if not isinstance(st, dict):
            raise ProfileError(f"{v.where}: schedule.steps[{i}] must be a table")
        v.keys(st, STEP_KEYS, f"schedule.steps[{i}]")
        if "at_ms" not in st:
            raise ProfileError(f"{v.where}: schedule.steps[{i}] needs at_ms")
        if len(st) < 2:
            raise ProfileError(f"{v.where}: schedule.steps[{i}] changes no parameter")
        v.ms(st, "at_ms", f"schedule.steps[{i}]")
        v.mbit(st, "rate_mbit", f"schedule.steps[{i}]", 0)
        v.ms(st, "rtt_ms", f"schedule.steps[{i}]")
        for key in ("loss", "loss_up", "loss_down"):
            v.fraction(st, key, f"schedule.steps[{i}]", 0.0)


class _V:
    """Typed lookups with one-line errors naming the file and the key."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, msg: str) -> ProfileError:
        return ProfileError(f"{self.where}: {msg}")

    def keys(self, t: dict[str, Any], allowed: set[str], section: str) -> None:
        for k in t:
            if k not in allowed:
                name = f"{section}.{k}" if section else k
                raise self.fail(f"unknown key '{name}' (allowed: {', '.join(sorted(allowed))})")

    def table(self, data: dict[str, Any], key: str) -> dict[str, Any]:
        t = data.get(key, {})
        if not isinstance(t, dict):
            raise self.fail(f"[{key}] must be a table")
        return t

    def number(self, t: dict[str, Any], key: str, section: str) -> float | None:
        if key not in t:
            return None
        x = t[key]
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise self.fail(f"{section}.{key} must be a number, got {x!r}")
        return float(x)

    def mbit(self, t: dict[str, Any], key: str, section: str, default: int = 0,
             required: bool = False) -> int:
        x = self.number(t, key, section)
        if x is None:
            if required:
                raise self.fail(f"{section}.{key} is required")
            return default
        if x <= 0 or x > 100_000:
            raise self.fail(f"{section}.{key} must be > 0 and <= 100000 Mbit/s, got {x:g}")
        return round(x * 1e6)

    def ms(self, t: dict[str, Any], key: str, section: str) -> int:
        x = self.number(t, key, section)
        if x is None:
            return 0
        if x < 0 or x > 60_000:
            raise self.fail(f"{section}.{key} must be between 0 and 60000 ms, got {x:g}")
        return round(x * 1e6)

    def fraction(self, t: dict[str, Any], key: str, section: str, default: float | None,
                 upper: float = 1.0) -> float:
        x = self.number(t, key, section)
        if x is None:
            if default is None:
                raise self.fail(f"{section}.{key} is required")
            return default
        if not 0.0 <= x <= upper:
            raise self.fail(f"{section}.{key} must be between 0 and {upper:g} (a fraction, not a"
                            f" percentage), got {x:g}")
        return x

    def integer(self, t: dict[str, Any], key: str, section: str, default: int, lo: int = 0,
                hi: int = 1 << 62) -> int:
        if key not in t:
            return default
        x = t[key]
        if isinstance(x, bool) or not isinstance(x, int):
            raise self.fail(f"{section}.{key} must be an integer, got {x!r}")
        if not lo <= x <= hi:
            raise self.fail(f"{section}.{key} must be between {lo} and {hi}, got {x}")
        return x
