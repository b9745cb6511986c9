"""The lab network a probe runs through (adapter): the testbed's client namespace behind the
shaper. Adds what a probe needs to ``Testbed``: the client route's ``advmss``, the profile to
restore, the testbed CA, and the server's true CC (ground truth on the testbed)."""

from __future__ import annotations

from collections.abc import Sequence

from protolens.shaper.control import ShaperClient
from protolens.shaper.records import Profile
from protolens.testbed import Testbed
from protolens.testbed.run import run


class LabPath:
    """A probe path through testbed ``tb`` (its servers are the 198.18.2.x addresses)."""

    def __init__(self, tb: Testbed) -> None:
        self.tb = tb

    def exec_argv(self, cmd: Sequence[str] = ()) -> list[str]:
        return self.tb.exec_argv(cmd)

    def shaper(self) -> ShaperClient:
        return self.tb.shaper()

    def shape(self, profile: str | Profile) -> Profile:
        return self.tb.shape(profile)

    def set_advmss(self, mss: int | None) -> None:
        """``ip route change default via <router> [advmss N]`` in the client namespace: the server
        then sends N-byte segments (ARCHITECTURE.md "Congestion-control fingerprint facts")."""
        t = self.tb.topo
        argv = ["ip", "-n", t.cli_ns, "route", "change", "default", "via", t.rtr_cli_ip]
        run(argv + (["advmss", str(mss)] if mss else []))

    def flush_tcp_metrics(self) -> None:
        self.tb.flush_tcp_metrics()

    def current_profile(self) -> str:
        return self.tb.state.profile_path

    def ca(self) -> str | None:
        return self.tb.state.ca

    def server_cc(self, ip: str) -> str | None:
        if ip == self.tb.topo.bbr_srv_ip and self.tb.state.bbr_hosts:
            return "bbr"
        return self.tb.state.server_cc if ip == self.tb.state.server_ip else None
