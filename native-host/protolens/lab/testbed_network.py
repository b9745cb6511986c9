"""The testbed as a ``LabNetwork``: browser in the client namespace, pages from the corpus,
conditions = shaper profiles, ground truth = the shaper's per-flow counters (adapter)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protolens.lab.network import Lateness
from protolens.lab.runner import Target
from protolens.pages import ensure_corpus
from protolens.testbed import Testbed, TestbedError

DEFAULT_PROFILE = "clean"


class TestbedNetwork:
    """A running testbed (brought up here if needed, and then taken down by ``close``)."""

    __test__ = False
    name = "testbed"

    def __init__(self, testbed: Testbed, owned: bool) -> None:
        self.testbed = testbed
        self.owned = owned
        self.server_cc: str | None = testbed.state.server_cc
        from protolens.shaper import builtin_names
        self.conditions: Sequence[str] = builtin_names()

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

    def browser_prefix(self) -> list[str]:
        return self.testbed.exec_argv()

    def host_rules(self) -> str | None:
        return self.testbed.host_rules()

    def proxy_setup(self) -> tuple[list[str], dict[str, str], str]:
        """Where the lab proxy runs (client namespace), the hosts it serves and their address,
        and the CA that verifies caddy (issue 6)."""
        return self.testbed.exec_argv(), self.testbed.host_ips(), self.testbed.state.ca

    def spki(self) -> list[str]:
        return [self.testbed.state.spki]

    def apply(self, condition: str) -> None:
        if self.testbed.state.profile != condition:
            self.testbed.shape(condition)

    def before_load(self) -> None:
        self.testbed.check()
        self.testbed.flush_tcp_metrics()
        self.testbed.stats(reset=True)

    def after_load(self) -> tuple[list[dict[str, Any]], Lateness | None]:
        stats = self.testbed.stats(reset=False)
        from protolens.shaper.summary import truth_rows
        lat = stats.get("lateness", {})
        return truth_rows(stats), Lateness(max_ns=int(lat.get("max_ns", 0)),
                                           p99_ns=int(lat.get("p99_ns", 0)))

    def close(self) -> None:
        if self.owned:
            Testbed.down(self.testbed.state.name, dict(os.environ))
