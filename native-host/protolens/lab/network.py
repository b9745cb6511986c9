"""What the lab runner needs from a network: the testbed, or the user's own network (``--urls``).

A ``LabNetwork`` is an adapter; the runner only calls these methods, so it runs unchanged against
the namespaced testbed and against real sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protolens.lab.path_rtt import ProfileRtt


@dataclass(frozen=True)
class Lateness:
    """The shaper's timer lateness over a load's window (it reports its own:
    docs/ARCHITECTURE.md, Packet-level shaping)."""

    max_ns: int
    p99_ns: int


class LabNetwork(Protocol):
    """The network side of a lab load."""

    name: str
    """``testbed`` or ``direct``."""
    conditions: Sequence[str]
    """Conditions this network can apply."""
    server_cc: str | None
    """The server's TCP congestion control, when the network controls it."""

    def browser_prefix(self) -> list[str]:
        """argv prefix that runs the browser inside the network (e.g. ``ip netns exec``)."""
        ...

    def host_rules(self) -> str | None:
        """``--host-resolver-rules`` value, or None to resolve names normally."""
        ...

    def spki(self) -> list[str]:
        """Certificate SPKI hashes the lab browser trusts."""
        ...

    def apply(self, condition: str) -> None:
        """Switch to a network condition (a shaper profile)."""
        ...

    def before_load(self) -> None:
        """Flush cached TCP metrics and reset the per-flow counters (docs/ARCHITECTURE.md)."""
        ...

    def after_load(self) -> tuple[list[dict[str, Any]], Lateness | None]:
        """The flows seen since ``before_load`` and the shaper's lateness, if it has a shaper."""
        ...


class DirectNetwork:
    """The user's own network: no shaping, no ground truth (``lab run --urls`` with condition
    ``none``). The lab proxy runs beside the browser and resolves every host itself."""

    name: str = "direct"
    conditions: Sequence[str] = ("none",)
    server_cc: str | None = None
    proxy_resolves = True

    def proxy_setup(self) -> tuple[list[str], dict[str, str], str | None]:
        return [], {}, None

    def profile_rtt(self, condition: str) -> ProfileRtt:
        """No profile: the whole round trip is the path's."""
        return ProfileRtt(0.0, 0.0, 0.0)

    def info(self, conditions: Sequence[str]) -> dict[str, Any]:
        return {"path": "direct", "network": None, "uplink": None, "profiles": {}}

    def browser_prefix(self) -> list[str]:
        return []

    def host_rules(self) -> str | None:
        return None

    def spki(self) -> list[str]:
        return []

    def apply(self, condition: str) -> None:
        if condition not in self.conditions:
            raise ValueError(f"condition {condition!r} needs the testbed; against real sites "
                             f"only {', '.join(self.conditions)} applies")

    def before_load(self) -> None:
        return None

    def after_load(self) -> tuple[list[dict[str, Any]], Lateness | None]:
        return [], None
