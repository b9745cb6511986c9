"""The CC fingerprint on the testbed (root, namespaces, caddy, the shaper; run under the heavy
lock). The testbed sets the server's CC, so every label has a known answer (issue 9):
CUBIC with HyStart and BBR are delay-based, CUBIC without HyStart and Reno loss-based."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from protolens.cc.igor import TRUTH
from protolens.cc.paths import LabPath
from protolens.cc.probe import probe
from tests.cli.run import protolens
from tests.testbed.conftest import lab_available

pytestmark = pytest.mark.netns
NAME = "ccp"
URL = "https://a.test/_testbed/{}.bin"


@pytest.fixture(scope="module")
def bed() -> Iterator[Any]:
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    from protolens.testbed import Testbed
    Testbed.down(NAME)
    yield Testbed
    Testbed.down(NAME)


def up(bed: Any, cc: str) -> Any:
    bed.down(NAME)
    return bed.up(name=NAME, profile="wifi", server_cc=cc)


def probe_cli(db: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return protolens("cc", "probe", "--testbed", NAME, *args, db=db, check=check, timeout=300)


@pytest.mark.parametrize("cc", ["reno", "cubic-nohystart", "cubic", "bbr"])
def test_label_is_right_for_160_and_320_kb_at_500_bytes(bed: Any, cc: str,
                                                          tmp_path: Path) -> None:
    tb = up(bed, cc)
    db = tmp_path / "s.db"
    p = probe_cli(db, URL.format("160k"), URL.format("320k"), "--packet-bytes", "500",
                  "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [r["label"] for r in rows] == [TRUTH[cc]] * 2, [r["reason"] for r in rows]
    for r in rows:
        assert r["server_cc"] == cc and r["packet_bytes"] == 500 and r["mss"] == 460
        assert r["rtt_ms"] == 100 and r["host"] == "a.test" and r["server_ip"] == "198.18.2.2"
    stored = sqlite3.connect(db).execute("SELECT label, server_cc FROM cc_probes").fetchall()
    assert stored == [(TRUTH[cc], cc)] * 2
    # the probe put the testbed back as it found it: profile and route
    assert tb.status()["profile"] == "wifi"
    route = subprocess.run(tb.exec_argv(["ip", "route", "show", "default"]),
                           capture_output=True, text=True).stdout
    assert "advmss" not in route


def test_small_objects_too_small_and_http2(bed: Any, tmp_path: Path) -> None:
    up(bed, "reno")
    db = tmp_path / "s.db"
    p = probe_cli(db, URL.format("40k"), "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["label"] == "too-small-to-judge" and row["packet_bytes"] == 100  # Igor's rule
    p = probe_cli(db, URL.format("160k"), "--http", "2", "--packet-bytes", "500", "--json")
    (row,) = json.loads(p.stdout)
    assert row["http_version"] == "2" and row["label"] == "loss-based"


def test_page_probes_the_top_host_by_bytes(bed: Any, tmp_path: Path) -> None:
    from tests.cc.test_cc_store import page_store
    up(bed, "bbr")
    db = tmp_path / "p.db"
    nav = page_store(db)  # a.test: 320 kB object and most bytes; b.test: 40 kB
    p = probe_cli(db, "--page", nav[:8], "--top", "1", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["host"] == "a.test" and row["url"].endswith("/320k.bin")
    assert row["label"] == "delay-based" and row["packet_bytes"] == 500  # Igor's rule


def _cwnd_and_queue(bed: Any, cc: str, tmp_path: Path) -> tuple[list[dict[str, Any]], Any]:
    from protolens.testbed.tcpstats import sample
    tb = up(bed, cc)
    out = tmp_path / f"{cc}.jsonl"
    t = threading.Thread(target=sample, args=(tb, 4.5, out))
    t.start()
    res = probe(LabPath(tb), URL.format("160k"), packet_bytes=500)
    t.join()
    ss = [json.loads(line) for line in out.read_text().splitlines()]
    return [s for s in ss if s.get("cwnd")], res


@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_queue_samples_follow_the_servers_cwnd(bed: Any, cc: str, tmp_path: Path) -> None:
    """Shape agreement with ``ss -tin`` in the server namespace: the bottleneck queue holds what
    is in flight beyond the path (queue packets ~ unacked - BDP), so the two series move
    together; reno's cwnd grows until its first retransmission, HyStart's stops growing (an
    ssthresh appears) with no retransmission at all."""
    ss, res = _cwnd_and_queue(bed, cc, tmp_path)
    assert len(ss) > 50
    t = res.timeline
    q_times = np.array(t.times_ms())
    q = np.array(t.queue_bytes) / t.packet_bytes
    req_ns = res.request_ns  # both clocks are the wall clock: ss's date +%s%N, the shaper's
    ss_t = np.array([(s["t_ns"] - req_ns) / 1e6 for s in ss])
    unacked = np.array([s.get("unacked", 0) for s in ss], dtype=float)
    inside = (ss_t >= 0) & (ss_t <= res.verdict.evidence.transfer_ms)
    q_at = np.interp(ss_t[inside], q_times, q)
    corr = float(np.corrcoef(q_at, unacked[inside])[0, 1])
    assert corr > 0.8, (cc, corr)
    retrans = [s for s in ss if s.get("retrans_total", 0) > 0]
    if cc == "reno":
        first = retrans[0]["t_ns"]
        before = [s["cwnd"] for s in ss if s["t_ns"] < first]
        assert before == sorted(before), "loss-based cwnd grows until the first retransmission"
        assert max(before) > 100
    else:
        assert not [s for s in ss if (s["t_ns"] - req_ns) / 1e6 < 2000 and
                    s.get("retrans_total", 0) > 0]
        early = [s for s in ss if "ssthresh" in s and (s["t_ns"] - req_ns) / 1e6 < 1500]
        assert early, "HyStart left slow start (ssthresh set) without a loss"


@pytest.fixture
def bad_server(bed: Any) -> Iterator[Any]:
    tb = up(bed, "reno")
    proc = subprocess.Popen(tb.server_argv([sys.executable, str(Path(__file__).parent /
                                                                "bad_server.py"), "8080"]),
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield tb
    proc.terminate()
    proc.wait(5)


@pytest.mark.parametrize(("url", "needle"), [
    ("http://198.18.2.99:8080/x", "cannot connect"),
    ("http://a.test:8080/loop", "too many redirects"),
    ("http://a.test:8080/short", "closed the connection before"),
])
def test_errors_are_one_line_and_store_nothing(bad_server: Any, tmp_path: Path, url: str,
                                               needle: str) -> None:
    db = tmp_path / "s.db"
    p = probe_cli(db, url)
    assert p.returncode == 1
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or sqlite3.connect(db).execute(
        "SELECT count(*) FROM cc_probes").fetchone()[0] == 0


def test_not_http_is_refused_before_anything(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    p = probe_cli(db, "ftp://a.test/x")
    assert p.returncode == 2 and "not an http(s) URL" in p.stderr and not db.exists()
