"""Any shaped network as a ``LabNetwork`` (adapter): the browser runs in its client namespace,
conditions are shaper profiles, the ground truth is the shaper's per-flow counters and its own
lateness. ``TestbedNetwork`` adds the testbed's pages, names and certificate; a network of
another kind (``testbed.lifecycle.Network``) needs only where its names resolve and which
certificates the browser trusts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from protolens.lab.network import Lateness
from protolens.lab.path_rtt import ProfileRtt, profile_rtt, profile_settings
from protolens.shaper import builtin_names, load_profile
from protolens.shaper.schedule import plays_once
from protolens.shaper.summary import truth_rows
from protolens.testbed.lifecycle import Network


class ShapedNetwork:
    """A network that is up (brought up by ``prepare`` if needed, and then taken down by
    ``close``)."""

    __test__ = False
    name = "shaped"

    def __init__(self, net: Network[Any], owned: bool, server_cc: str | None) -> None:
        self.net = net
        self.owned = owned
        self.server_cc = server_cc
        self.conditions: Sequence[str] = builtin_names()
        self._rtts: dict[str, ProfileRtt] = {}
        self._once: dict[str, bool] = {}
        self._condition: str | None = None
        """The condition applied last (``apply``)."""

    def browser_prefix(self) -> list[str]:
        return self.net.exec_argv()

    def host_rules(self) -> str | None:
        return None

    def spki(self) -> list[str]:
        return []

    def profile_rtt(self, condition: str) -> ProfileRtt:
        """The RTT the shaper adds under ``condition`` (what a host's round trip is held to)."""
        if condition not in self._rtts:
            self._rtts[condition] = profile_rtt(load_profile(condition))
        return self._rtts[condition]

    def _plays_once(self, condition: str) -> bool:
        if condition not in self._once:
            self._once[condition] = plays_once(load_profile(condition))
        return self._once[condition]

    def info(self, conditions: Sequence[str]) -> dict[str, Any]:
        """What a campaign records of the path a run used: its kind and network, and each
        condition's shaper settings."""
        return {"path": self.name, "network": self.net.state.name, "uplink": None,
                "server_cc": self.server_cc,
                "profiles": {c: profile_settings(load_profile(c)) for c in conditions}}

    def apply(self, condition: str) -> None:
        self._condition = condition
        if self.net.state.profile != condition:
            self.net.shape(condition)

    def before_load(self) -> None:
        self.net.check()
        if self._condition is not None and self._plays_once(self._condition):
            # applied once per change of condition, a schedule that plays once (slowdown's
            # ramp) would reach only the first load after it: each load gets it from the start
            self.net.shape(self._condition)
        self.net.flush_tcp_metrics()
        self.net.stats(reset=True)

    def after_load(self) -> tuple[list[dict[str, Any]], Lateness | None]:
        stats = self.net.stats(reset=False)
        lat = stats.get("lateness", {})
        return truth_rows(stats), Lateness(max_ns=int(lat.get("max_ns", 0)),
                                           p99_ns=int(lat.get("p99_ns", 0)))

    def close(self) -> None:
        if self.owned:
            type(self.net).down(self.net.state.name, dict(os.environ))
