"""One lab load as data (pure): what it is, the tags its records carry, and the row stored for
its attempt, flagged when the shaper ran late. ``runner.py`` runs it (``browse`` then
``record``), for a campaign's loads and for each browser side of a fairness repetition alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protolens.arms import Arm
from protolens.lab.network import Lateness


@dataclass(frozen=True)
class LoadSpec:
    """One browser start: a page under an arm and a condition, once (cold) or twice (warm)."""

    load_id: str
    campaign: str
    page: str
    arm: Arm
    condition: str
    repetition: int
    warm: bool = False
    attempt: int = 1
    tags: tuple[tuple[str, Any], ...] = ()
    """More tags for its records (a fairness side's ``fairness_pair``)."""

    @property
    def navigations(self) -> int:
        """Records the load makes: a warm load loads the page a second time."""
        return 2 if self.warm else 1

    def context(self, server_cc: str | None) -> dict[str, Any]:
        """The lab tags the host stores with each record of the load."""
        return {"campaign": self.campaign, "arm": str(self.arm), "condition": self.condition,
                "repetition": self.repetition, "page": self.page, "server_cc": server_cc,
                "load_id": self.load_id, **dict(self.tags)}


def flag_reason(lateness: Lateness | None, threshold_ns: int) -> str | None:
    """Why a load is flagged: a packet left the shaper later than ``threshold_ns``."""
    if lateness is None or lateness.max_ns <= threshold_ns:
        return None
    return (f"shaper late by up to {lateness.max_ns / 1e6:.1f} ms "
            f"(threshold {threshold_ns / 1e6:.1f} ms)")


def failure_reason(reason: str | None, attempt: int, log: object) -> str | None:
    """A failed attempt's stored reason: what went wrong, which attempt, where the log is."""
    return None if reason is None else f"{reason} (attempt {attempt}; browser log: {log})"


def load_row(load: LoadSpec, *, ok: bool, reason: str | None, started_ms: float,
             wall_ms: float, server_cc: str | None, command_line: str,
             lateness: Lateness | None, flagged: str | None) -> Mapping[str, Any]:
    """The stored row of one load attempt (``store.lab.record_load``)."""
    return {"load_id": load.load_id, "campaign": load.campaign, "page": load.page,
            "arm": str(load.arm), "condition": load.condition, "repetition": load.repetition,
            "warm": int(load.warm), "attempt": load.attempt,
            "status": "ok" if ok else "failed", "reason": None if ok else reason,
            "started_at_ms": started_ms, "wall_ms": wall_ms, "server_cc": server_cc,
            "command_line": command_line,
            "lateness_max_ns": lateness.max_ns if lateness else None,
            "lateness_p99_ns": lateness.p99_ns if lateness else None,
            "flagged": int(flagged is not None), "flag_reason": flagged}
