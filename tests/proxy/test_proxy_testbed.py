"""The lab proxy and the no-h3 relay on the real testbed (root, namespaces, shaper, caddy,
Chromium + extension), checked against caddy's access log (protocol and client port of every
request) and the shaper's per-flow counters, which the proxy does not control.

One campaign loads a two-host page (a.test: 15 requests, b.test: 1) under each proxied arm and a
per-domain policy; the rest exercise the proxy and the relay directly.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.run import caddy_hits, protolens, running_testbed
from tests.cli.run import store_rows as rows

pytestmark = [pytest.mark.netns, pytest.mark.e2e]

TB = "pgt"
PAGE = "ifip18-twitter"
ARMS = ("proxy-h1", "proxy-h2", "h2-parallel:2", "proxy-h3", "h2")


@pytest.fixture(scope="module")
def testbed() -> Iterator[dict[str, Any]]:
    with running_testbed(TB) as status:
        yield status


@pytest.fixture(scope="module")
def campaign(testbed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("proxy")
    db = d / "lab.db"
    policy = d / "mix.toml"
    policy.write_text('[[rule]]\ndomain = "b.test"\narm = "h1"\n')
    out = protolens("lab", "run", "--pages", PAGE, "--arms", ",".join(ARMS), "--policy",
                    str(policy), "--conditions", "clean", "--reps", "1", "--campaign", "px",
                    "--seed", "3", "--testbed", TB, "--db", str(db), check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return db


def load_of(db: Path, arm: str) -> dict[str, Any]:
    (load,) = rows(db, "SELECT * FROM loads WHERE arm = ? AND status = 'ok'", arm)
    (nav,) = rows(db, "SELECT id FROM navigations WHERE load_id = ?", load["load_id"])
    load["nav"] = nav["id"]
    after = rows(db, "SELECT min(started_at_ms) AS t FROM loads WHERE started_at_ms > ?",
                 load["started_at_ms"])
    load["next_start"] = after[0]["t"] if after and after[0]["t"] is not None else float("inf")
    return load


def window(testbed: dict[str, Any], load: dict[str, Any]) -> list[dict[str, Any]]:
    """caddy's hits of the load: from its start to 0.5 s after it was stored, or to the next
    load's start if that came first (the next browser, started during this page's quiet, goes
    within 0.2 s of this one's stop: lab/runner.py overlap)."""
    return caddy_hits(testbed["access_log"], load["started_at_ms"],
                      min(load["started_at_ms"] + load["wall_ms"] + 500, load["next_start"]))


def upstream(db: Path, nav: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT * FROM connections WHERE navigation_id = ? AND upstream = 1", nav)


@pytest.mark.parametrize(("arm", "family", "low", "high"), [
    ("proxy-h1", "h1", 2, 6), ("proxy-h2", "h2", 1, 1), ("h2-parallel:2", "h2", 2, 2)])
def test_tcp_arms_on_the_wire(campaign: Path, testbed: dict[str, Any], arm: str, family: str,
                              low: int, high: int) -> None:
    load = load_of(campaign, arm)
    seen = window(testbed, load)
    a = [h for h in seen if h["host"] == "a.test"]
    assert len(a) == 15 and {h["family"] for h in a} == {family}, seen
    ports = Counter(h["port"] for h in a)
    assert low <= len(ports) <= high, ports
    if arm == "h2-parallel:2":
        assert max(ports.values()) - min(ports.values()) <= 1, ports  # round-robin
    ups = upstream(campaign, load["nav"])
    # the stored upstream connections are exactly the ports caddy saw carrying requests
    assert {u["connection_id"] for u in ups} == {h["port"] for h in seen}
    assert {u["connection_id"]: u["requests"] for u in ups if u["host"] == "a.test"} == ports
    assert abs(sum(u["share"] for u in ups) - 1) < 1e-9
    flows = {f["client_port"]: f for f in rows(campaign, "SELECT * FROM flows WHERE load_id = ?",
                                               load["load_id"])}
    for port in ports:
        assert flows[port]["proto"] == "tcp" and flows[port]["bytes_down"] > 0
    pol = {p["host"]: p for p in rows(campaign, "SELECT * FROM navigation_policies WHERE "
                                      "navigation_id = ?", load["nav"])}
    assert pol["a.test"]["mechanism"] == "proxy" and pol["a.test"]["arm"] == arm.removeprefix(
        "proxy-")


def test_h3_upstream_is_udp_only(campaign: Path, testbed: dict[str, Any]) -> None:
    load = load_of(campaign, "proxy-h3")
    seen = window(testbed, load)
    assert seen and {h["family"] for h in seen} == {"h3"}, seen
    flows = rows(campaign, "SELECT * FROM flows WHERE load_id = ? AND server_port = 443 AND "
                 "bytes_down > 0", load["load_id"])
    assert flows and {f["proto"] for f in flows} == {"udp"}, flows
    assert {u["family"] for u in upstream(campaign, load["nav"])} == {"h3"}


def test_policy_mix_leaves_other_hosts_untouched(campaign: Path, testbed: dict[str, Any]
                                                 ) -> None:
    load = load_of(campaign, "policy")
    seen = window(testbed, load)
    a = [h for h in seen if h["host"] == "a.test"]
    b = [h for h in seen if h["host"] == "b.test"]
    assert {h["family"] for h in a} == {"h2"} and len({h["port"] for h in a}) == 1
    assert {h["family"] for h in b} == {"h1"}
    ups = upstream(campaign, load["nav"])
    assert [u["host"] for u in ups] == ["b.test"]
    fams = {r["host"]: r["family"] for r in rows(
        campaign, "SELECT host, family FROM requests WHERE navigation_id = ?", load["nav"])}
    assert fams == {"a.test": "h2", "b.test": "h1"}  # the browser's own view
    pol = {p["host"]: p["mechanism"] for p in rows(
        campaign, "SELECT * FROM navigation_policies WHERE navigation_id = ?", load["nav"])}
    assert pol == {"a.test": "proxy-tunnel", "b.test": "proxy"}


def test_flag_arm_has_no_upstream_rows(campaign: Path) -> None:
    load = load_of(campaign, "h2")
    assert upstream(campaign, load["nav"]) == []
    assert "--proxy-server" not in load["command_line"]


def test_ca_is_private_and_only_lab_profiles_pin_it(campaign: Path) -> None:
    import datetime

    from protolens.certs import ensure_ca
    from protolens.paths import data_home
    d = data_home(os.environ) / "proxy"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    for key in ("ca-key.pem", "leaf-key.pem"):
        assert stat.S_IMODE((d / key).stat().st_mode) == 0o600
    ca = ensure_ca(d, datetime.datetime.now(datetime.UTC))
    body = "".join(ca.ca_cert.read_text().splitlines()[1:-1])[:64]
    for store in ("/etc/ssl/certs/ca-certificates.crt",):
        assert body not in Path(store).read_text()
    assert not list(Path("/usr/local/share/ca-certificates").glob("*rotoLens*"))
    for load in rows(campaign, "SELECT arm, command_line FROM loads"):
        pinned = ca.spki in load["command_line"]
        assert pinned == (load["arm"] != "h2"), load["arm"]


@pytest.fixture(scope="module")
def proxy(testbed: dict[str, Any]) -> Iterator[Any]:
    from protolens.proxy import control
    hosts = {h: testbed["server_ip"] for h in testbed["hosts"]}
    p = control.start(hosts=hosts, upstream_ca=testbed["ca"],
                      prefix=["ip", "netns", "exec", testbed["client_ns"]],
                      rules=[{"domain": "a.test", "arm": "h2"}], listen="0.0.0.0")
    try:
        yield p
    finally:
        p.stop()


def curl(ns: str, proxy_url: str, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, "curl", "-sS", "-o", "/dev/null", "-w",
                           "%{http_code} %{http_version}", "--max-time", "10", "--proxy",
                           proxy_url, *extra, url], capture_output=True, text=True)


def test_proxy_refusals(proxy: Any, testbed: dict[str, Any]) -> None:
    ns, url = testbed["client_ns"], "https://a.test/_testbed/100k.bin"
    local = f"http://127.0.0.1:{proxy.port}"
    cred = ("--proxy-user", f"protolens:{proxy.token}", "--cacert", str(proxy.ca.ca_cert))
    assert curl(ns, local, url, *cred).stdout == "200 2"
    assert "407" in curl(ns, local, url, "--cacert", str(proxy.ca.ca_cert)).stderr
    assert "403" in curl(ns, local, "https://www.google.com/", *cred).stderr
    # from the namespace's own address (not loopback): closed without an answer
    other = curl(ns, f"http://{testbed['client_ip']}:{proxy.port}", url, *cred)
    assert other.returncode != 0 and not other.stdout.startswith("200")
    report = proxy.report(reset=True)
    assert {r.get("status") for r in report["refused"] if "status" in r} == {403, 407}
    assert any(r.get("reason") == "not loopback" for r in report["refused"])
    assert [c["host"] for c in report["connections"]] == ["a.test"]


def test_relay_keeps_a_quic_page_on_h2(testbed: dict[str, Any], tmp_path: Path) -> None:
    ns, ip = testbed["client_ns"], testbed["server_ip"]
    relay = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-m", "protolens.cli",
                              "relay", "--port", "0", "--map", f"a.test={ip}"],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert relay.stdout is not None
        ready = json.loads(relay.stdout.readline())
        port = ready["port"]

        def load(profile: str, *extra: str) -> set[str]:
            start = time.time() * 1000
            # the relay's per-run credential, as the lab browser carries it (proxy/peer.py)
            env = {**os.environ, "HOME": str(tmp_path), "PROTOLENS_PROXY_TOKEN": ready["password"]}
            # one profile per load: the relayed load cannot depend on what the direct one left
            # in its profile. Twice in CI the relayed load reached caddy with no request at all;
            # the second time Chromium said ERR_INVALID_AUTH_CREDENTIALS: the relay's scan of
            # /proc had missed the browser's socket (mended; tests/proxy/test_peer.py). The
            # assertion below says what Chromium did
            run = subprocess.run(["ip", "netns", "exec", ns, "chromium", "--headless=new",
                                  "--no-sandbox", "--disable-gpu",
                                  f"--user-data-dir={tmp_path / profile}", "--enable-quic",
                                  "--origin-to-force-quic-on=a.test:443",
                                  f"--ignore-certificate-errors-spki-list={testbed['spki']}",
                                  f"--host-resolver-rules=MAP *.test {ip}", *extra, "--dump-dom",
                                  "https://a.test/_testbed/"], env=env, capture_output=True,
                                 text=True, timeout=60)
            time.sleep(0.5)
            families = {h["family"] for h in caddy_hits(testbed["access_log"], start,
                                                        time.time() * 1000)
                        if h["host"] == "a.test"}
            assert families, (f"no request for a.test reached caddy: chromium exit "
                              f"{run.returncode}, DOM {run.stdout[:200]!r}, "
                              f"stderr {run.stderr[-600:]!r}")
            return families
        assert load("direct") == {"h3"}  # without the relay the page uses QUIC
        assert load("relayed", f"--proxy-server=http://127.0.0.1:{port}") == {"h2"}
    finally:
        os.killpg(relay.pid, 15)
        relay.wait(5)


def test_relay_bad_map_is_one_line_error() -> None:
    out = protolens("relay", "--map", "bad", check=False)
    assert out.returncode == 2 and "expected HOST=IP" in out.stderr
    assert out.stderr.count("\n") == 1
