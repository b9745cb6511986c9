"""The testbed as a ``LabNetwork``: a ``ShapedNetwork`` whose pages come from the corpus, served
by caddy under the test names with the testbed's certificate (adapter)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protolens.lab.runner import Target
from protolens.lab.shaped_network import ShapedNetwork
from protolens.pages import ensure_corpus
from protolens.testbed import Testbed, TestbedError

DEFAULT_PROFILE = "clean"


class TestbedNetwork(ShapedNetwork):
    """A running testbed (brought up here if needed, and then taken down by ``close``)."""

    __test__ = False
    name = "testbed"

    def __init__(self, testbed: Testbed, owned: bool) -> None:
        super().__init__(testbed, owned, testbed.state.server_cc)
        self.testbed = testbed

    @classmethod
    def prepare(cls, name: str, *, server_cc: str, pages: Sequence[str],
                bbr_hosts: Sequence[str] = ()) -> TestbedNetwork:
        """Use testbed ``name`` if it is up with this server CC and these BBR hosts, else bring
        it up."""
        try:
            tb = Testbed.load(name)
        except TestbedError:
            tb = None
        if tb is not None:
            if tb.state.server_cc != server_cc:
                raise TestbedError(
                    f"testbed '{name}' runs server CC {tb.state.server_cc}, the campaign asks "
                    f"for {server_cc}: protolens testbed down --name {name}, or --server-cc "
                    f"{tb.state.server_cc}")
            if sorted(tb.state.bbr_hosts) != sorted(bbr_hosts):
                have = ", ".join(tb.state.bbr_hosts) or "none"
                raise TestbedError(
                    f"testbed '{name}' serves BBR hosts {have}, the campaign asks for "
                    f"{', '.join(bbr_hosts) or 'none'}: protolens testbed down --name {name}")
            tb.check()
            owned = False
        else:
            tb = Testbed.up(name=name, profile=DEFAULT_PROFILE, server_cc=server_cc,
                            bbr_hosts=bbr_hosts)
            owned = True
        ensure_corpus(Path(tb.state.site), pages)
        return cls(tb, owned)

    def targets(self, pages: Sequence[str]) -> dict[str, Target]:
        manifests = {m.name: m for m in ensure_corpus(Path(self.testbed.state.site), pages)}
        out = {}
        for page in pages:
            m = manifests[page]
            hosts = list(dict.fromkeys(o.host for o in m.objects))
            out[page] = Target(url=f"https://{hosts[0] if hosts else 'a.test'}/{page}/",
                               origins=tuple(f"{h}:443" for h in hosts))
        return out

    def object_urls(self, page: str) -> list[str]:
        """Every object's absolute URL, the page first (a bulk competitor fetches them all)."""
        manifest = {m.name: m for m in ensure_corpus(Path(self.testbed.state.site), [page])}[page]
        return [o.url for o in manifest.objects]

    def host_rules(self) -> str | None:
        return self.testbed.host_rules()

    def proxy_setup(self) -> tuple[list[str], dict[str, str], str]:
        """Where the lab proxy runs (client namespace), the hosts it serves and their address,
        and the CA that verifies caddy."""
        return self.testbed.exec_argv(), self.testbed.host_ips(), self.testbed.state.ca

    def spki(self) -> list[str]:
        return [self.testbed.state.spki]
