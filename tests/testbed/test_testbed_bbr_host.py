"""``--bbr-host`` (root, namespaces): a host on the second server address is served over BBR
while the main address keeps the namespace's server CC (cubic), as CoNEXT'20's HTTPX needs
(shared/seeds/002). The CC is read from ``ss -tin`` in the server namespace during a transfer."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from protolens.testbed.tcpstats import parse_ss
from tests.testbed.conftest import lab_available

pytestmark = pytest.mark.netns


@pytest.fixture(scope="module")
def bbrlab() -> Iterator[Any]:
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    from protolens.testbed import Testbed

    Testbed.down("pltb")
    tb = Testbed.up(name="pltb", profile="clean", server_cc="cubic", bbr_hosts=["b.test"])
    try:
        yield tb
    finally:
        Testbed.down("pltb")


def _cc_during_transfer(tb: Any, host: str) -> dict[str, str]:
    """Server-side local address -> CC of the :443 sockets open while curl fetches from host
    (rate-limited so the transfer is still running when ss looks)."""
    curl = subprocess.Popen(tb.exec_argv(["curl", "-s", "--cacert", tb.state.ca,
                                          "--limit-rate", "1M", "-o", "/dev/null",
                                          f"https://{host}/_testbed/5m.bin"]))
    try:
        time.sleep(1.0)
        assert curl.poll() is None, f"curl to {host} ended early ({curl.returncode})"
        out = subprocess.run(tb.server_argv(["ss", "-tinH", "state", "established",
                                             "( sport = :443 )"]),
                             capture_output=True, text=True, check=True).stdout
    finally:
        curl.kill()
        curl.wait()
    socks = parse_ss(out)
    return {s["local"].rsplit(":", 1)[0].removeprefix("[::ffff:").rstrip("]"): s.get("cc", "?")
            for s in socks}


def test_bbr_host_resolves_to_the_second_address(bbrlab: Any) -> None:
    st = bbrlab.status()
    assert st["bbr_ip"] == "198.18.2.3"
    assert st["host_ips"]["b.test"] == "198.18.2.3"
    assert st["host_ips"]["a.test"] == st["server_ip"] == "198.18.2.2"
    assert bbrlab.host_rules() == "MAP b.test 198.18.2.3, MAP *.test 198.18.2.2"
    hosts = subprocess.run(bbrlab.exec_argv(["getent", "hosts", "b.test", "a.test"]),
                           capture_output=True, text=True, check=True).stdout.split()
    assert hosts[0] == "198.18.2.3" and hosts[2] == "198.18.2.2"


def test_second_address_serves_over_bbr_main_over_cubic(bbrlab: Any) -> None:
    assert _cc_during_transfer(bbrlab, "b.test") == {"198.18.2.3": "bbr"}
    assert _cc_during_transfer(bbrlab, "a.test") == {"198.18.2.2": "cubic"}


def test_unknown_bbr_host_is_refused() -> None:
    from protolens.testbed import Testbed, TestbedError

    with pytest.raises(TestbedError, match="not a testbed host"):
        Testbed.up(name="pltx", bbr_hosts=["nope.test"])
