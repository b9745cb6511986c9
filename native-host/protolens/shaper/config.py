"""Profile -> the shaper's config text (native-host/shaper/config.c). Pure."""

from __future__ import annotations

from protolens.shaper.records import Profile
from protolens.shaper.schedule import expand

_INT_KEYS = {"rate_bps", "buffer_bytes", "delay_ns", "jitter_ns", "paths", "path_rate_bps",
             "path_buffer_bytes", "ge", "cross_ip"}


def shaper_config(profile: Profile) -> str:
    tl = expand(profile)
    lines = [f"# protolens shaper config for profile {profile.name}",
             f"name {_token(profile.name)}", f"seed {tl.seed}"]
    if tl.loop_ns:
        lines.append(f"loop_ns {tl.loop_ns}")
    # Group the steps of one instant and direction on one line.
    grouped: dict[tuple[int, str], list[str]] = {}
    for s in tl.steps:
        value = str(int(s.value)) if s.key in _INT_KEYS else repr(float(s.value))
        grouped.setdefault((s.at_ns, s.dir), []).append(f"{s.key}={value}")
    for (at, direction), kvs in grouped.items():
        lines.append(f"at {at} {direction} {' '.join(kvs)}")
    return "\n".join(lines) + "\n"


def _token(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "unnamed"
