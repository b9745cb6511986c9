"""The networks a probe runs through (adapter): a shaped network's client namespace behind the
shaper (``testbed.lifecycle.Network``: the testbed or the wan path), plus what a probe asks
beyond it: the profile to restore, the CA that verifies the server, and the server's true CC
(ground truth on the testbed, unknown on the wan path)."""

from __future__ import annotations

from collections.abc import Sequence

from protolens.shaper.control import ShaperClient
from protolens.shaper.records import Profile
from protolens.testbed import Testbed
from protolens.testbed.wan import WanNetwork


class WanPath:
    """A probe path (``cc.probe.ProbePath``) to real sites through a wan network; ``LabPath``
    adds the testbed's CA and ground truth."""

    def __init__(self, net: Testbed | WanNetwork) -> None:
        self.net = net

    def exec_argv(self, cmd: Sequence[str] = ()) -> list[str]:
        return self.net.exec_argv(cmd)

    def shaper(self) -> ShaperClient:
        return self.net.shaper()

    def shape(self, profile: str | Profile) -> Profile:
        return self.net.shape(profile)

    def set_advmss(self, mss: int | None) -> None:
        self.net.set_advmss(mss)

    def flush_tcp_metrics(self) -> None:
        self.net.flush_tcp_metrics()

    def current_profile(self) -> str:
        return self.net.state.profile_path

    def ca(self) -> str | None:
        return None  # real sites: the system's CAs

    def server_cc(self, ip: str) -> str | None:
        return None  # unknown off the testbed


class LabPath(WanPath):
    """A probe path through testbed ``tb`` (its servers are the 198.18.2.x addresses)."""

    def __init__(self, tb: Testbed) -> None:
        super().__init__(tb)
        self.tb = tb

    def ca(self) -> str | None:
        return self.tb.state.ca

    def server_cc(self, ip: str) -> str | None:
        if ip == self.tb.topo.bbr_srv_ip and self.tb.state.bbr_hosts:
            return "bbr"
        return self.tb.state.server_cc if ip == self.tb.state.server_ip else None
