"""The testbed's pure specification (protolens.testbed.spec): argument validation with one-line
errors, the state file's round trip, and the problems and status derived from observations."""

from __future__ import annotations

import pytest

from protolens.testbed.spec import (
    TestbedError,
    TestbedState,
    problems,
    state_from_json,
    state_to_json,
    status,
    validate_up,
)
from protolens.testbed.topology import Topology

HOSTS = ("a.test", "b.test")


def state(**kw: object) -> TestbedState:
    base: dict[str, object] = dict(
        name="pl", run_dir="/r", hosts=list(HOSTS), server_ip="198.18.2.2",
        client_ip="198.18.1.2", spki="SPKI", cert="/c", ca="/ca", site="/s", access_log="/a",
        caddy_log="/cl", shaper_log="/sl", shaper_sock="/ss", profile="wifi", profile_path="/p",
        server_cc="cubic", initcwnd=None, created="2026-01-01T00:00:00+00:00")
    base.update(kw)
    return TestbedState(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("args", "message"), [
    (("PL", "cubic", None, ()), "bad testbed name 'PL': 1-8 lowercase letters or digits"),
    (("pl", "vegas", None, ()), "unknown server CC 'vegas' (cubic, cubic-nohystart, bbr, reno)"),
    (("pl", "cubic", 0, ()), "initcwnd must be between 1 and 1000, got 0"),
    (("pl", "cubic", None, ("z.test",)), "--bbr-host z.test is not a testbed host"),
])
def test_bad_arguments_are_one_line_errors(args: tuple, message: str) -> None:  # type: ignore[type-arg]
    name, cc, cwnd, bbr = args
    with pytest.raises(TestbedError) as e:
        validate_up(name, cc, cwnd, HOSTS, bbr)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_good_arguments_pass() -> None:
    validate_up("pl", "bbr", 10, HOSTS, ("b.test",))


def test_state_file_round_trips() -> None:
    st = state(pids={"caddy": 5}, cross_pids=[1, 2], bbr_hosts=["b.test"], initcwnd=20)
    assert state_from_json(state_to_json(st)) == st


def test_problems_and_status_follow_the_observations() -> None:
    st = state(bbr_hosts=["b.test"])
    topo = Topology("pl")
    assert problems(st, [], True, True) == []
    probs = problems(st, ["pl-rtr"], False, False)
    assert probs[0] == "namespaces missing: pl-rtr"
    assert probs[1].startswith("shaper not running") and probs[2] == "caddy not running (see /cl)"
    doc = status(st, topo, probs, {"running": False}, False, {})
    assert doc["up"] is False and doc["problems"] == probs
    assert doc["host_ips"] == {"a.test": "198.18.2.2", "b.test": topo.bbr_srv_ip}
    assert doc["chromium_flags"][0] == (f"--host-resolver-rules=MAP b.test {topo.bbr_srv_ip}, "
                                        "MAP *.test 198.18.2.2")
    assert status(st, topo, [], {"running": True}, True, {})["up"] is True
