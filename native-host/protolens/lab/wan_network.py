"""Real sites under a shaper profile (adapter): a ``ShapedNetwork`` on the wan path
(``testbed/wan.py``: the client namespace behind the shaper, NATed out of the uplink). Names
resolve for real, from inside the namespace (its own resolv.conf); the browser trusts the system's
certificates and, for a site served with a private CA (a staging server), that CA too; the lab
proxy runs in the client namespace and resolves the hosts it is asked for itself."""

from __future__ import annotations

import os
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protolens.lab.path_rtt import profile_settings
from protolens.lab.real_sites import condition_refusal
from protolens.lab.shaped_network import ShapedNetwork
from protolens.shaper import load_profile
from protolens.testbed import procs
from protolens.testbed.run import TestbedError
from protolens.testbed.wan import WanNetwork

DEFAULT_WAN = "plw"
"""The wan network a campaign brings up (apart from the testbed's ``pl``: the two share the
client subnet, so each needs its own namespaces)."""


class WanLabNetwork(ShapedNetwork):
    """A running wan network (brought up here if needed, and then taken down by ``close``)."""

    __test__ = False
    name = "wan"
    proxy_resolves = True
    """The lab proxy resolves each host itself (``proxy.server.Config.resolve``)."""

    def __init__(self, wan: WanNetwork, owned: bool, ca: str | None = None) -> None:
        super().__init__(wan, owned, None)
        self.wan = wan
        self.ca = ca

    @classmethod
    def prepare(cls, name: str, *, uplink: str | None = None, resolvers: Sequence[str] = (),
                ca: str | None = None) -> WanLabNetwork:
        """Use wan network ``name`` if it is up (on ``uplink``, if given), else bring it up;
        refuse one whose namespace has no name server."""
        try:
            wan = WanNetwork.load(name)
        except TestbedError:
            wan = None
        if wan is not None and _orphaned(wan):  # its campaign was killed: start afresh
            WanNetwork.down(name, dict(os.environ))
            wan = None
        owned = wan is None
        if wan is None:
            wan = WanNetwork.up(name, uplink, resolvers=resolvers)
            (Path(wan.state.run_dir) / OWNER).write_text(str(os.getpid()))
        elif uplink and wan.state.uplink != uplink:
            raise TestbedError(f"wan network '{name}' NATs out of {wan.state.uplink}, the "
                               f"campaign asks for {uplink}: protolens cc wan down --name {name}")
        elif resolvers and list(resolvers) != list(wan.state.resolvers):
            raise TestbedError(f"wan network '{name}' asks {', '.join(wan.state.resolvers) or 'no'}"
                               f" name servers, the campaign {', '.join(resolvers)}: protolens "
                               f"cc wan down --name {name}")
        net = cls(wan, owned, ca)
        if not wan.state.resolvers:
            net.close()
            raise TestbedError(f"wan network '{name}': no name server reachable from its "
                               "namespace (the host's resolv.conf names only a loopback stub): "
                               "give --resolver IP")
        wan.check()
        return net

    def apply(self, condition: str) -> None:
        refusal = condition_refusal(condition)
        if refusal:
            raise TestbedError(refusal)
        super().apply(condition)

    def spki(self) -> list[str]:
        if self.ca is None:
            return []
        from cryptography import x509

        from protolens.certs import spki_hash
        cert = x509.load_pem_x509_certificate(Path(self.ca).read_bytes())
        return [spki_hash(cert.public_key())]

    def proxy_setup(self) -> tuple[list[str], dict[str, str], str | None]:
        """The proxy runs in the client namespace, serves any host it resolves there, and
        verifies servers against the system's certificates (plus ``ca``, in one bundle that
        both its TCP and its QUIC side read)."""
        if self.ca is None:
            return self.wan.exec_argv(), {}, None
        bundle = Path(self.wan.state.run_dir) / "upstream-ca.pem"
        system = ssl.get_default_verify_paths().cafile
        parts = [Path(system).read_text() if system and Path(system).exists() else "",
                 Path(self.ca).read_text()]
        bundle.write_text("\n".join(p for p in parts if p))
        return self.wan.exec_argv(), {}, str(bundle)

    def info(self, conditions: Sequence[str]) -> dict[str, Any]:
        """What the campaign records of this run's path: the kind, the network, its uplink and
        name servers, and each condition's shaper settings."""
        st = self.wan.state
        return {"path": "wan", "network": st.name, "uplink": st.uplink,
                "resolvers": list(st.resolvers), "ca": self.ca,
                "profiles": {c: profile_settings(load_profile(c)) for c in conditions}}


OWNER = "owner.pid"
"""In the run directory of a wan network a campaign brought up: that campaign's process."""


def _orphaned(wan: WanNetwork) -> bool:
    """A wan network whose campaign died without taking it down (killed: no ``close``)."""
    try:
        pid = int((Path(wan.state.run_dir) / OWNER).read_text())
    except (OSError, ValueError):
        return False
    return not procs.alive(pid)
