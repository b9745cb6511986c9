"""Fairness core (lab/fairness.py, lab/pcap.py): pair parsing and its one-line errors, bins,
shares, the Jain index, intervals; the pcap reader against tcpdump's own reading of a capture
made here on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from protolens.arms import Arm
from protolens.lab.fairness import (
    BULK,
    BULK_DELAY_MAX_MS,
    Pair,
    PairError,
    Series,
    bin_downlink,
    bulk_delay_after,
    jain,
    late_start,
    mean_share,
    parse_pairs,
    progress_line,
    shares_over_time,
    start_lead_ms,
    summarize,
    summary_rows,
    wire_connections,
)
from protolens.lab.fairness_run import FairnessOutcome, started_together
from protolens.lab.pcap import Packet, PcapError, packets


def test_pairs_parse_with_colons_inside_arms() -> None:
    h1, h2, h3 = Arm("h1"), Arm("h2"), Arm("h3")
    pairs = parse_pairs("h2:h3, h2-parallel:2:h3,h1:h2,bulk:h2")
    assert pairs == [Pair(h2, h3), Pair(Arm("h2-parallel", 2), h3), Pair(h1, h2), Pair(BULK, h2)]
    assert [p.name for p in pairs] == ["h2:h3", "h2-parallel:2:h3", "h1:h2", "bulk:h2"]
    assert parse_pairs("h3:h2-parallel:4") == [Pair(h3, Arm("h2-parallel", 4))]


@pytest.mark.parametrize("text,message", [
    ("h2", "give exactly two arms"),
    ("h2:h9", "not two arms A:B"),
    ("h2:h3:h1", "not two arms A:B"),
    ("h2-parallel:99:h3", "not two arms A:B"),
    ("h2:policy", "policy cannot be a side"),
    ("h2-parallel:2:proxy-h2", "at most one side can go through the lab proxy"),
    ("bulk:bulk", "at most one side can be a bulk flow"),
    (",", "give at least one pair"),
])
def test_bad_pairs_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(PairError, match=message) as err:
        parse_pairs(text)
    assert "\n" not in str(err.value)


def _pkt(ms: float, src: str, length: int) -> Packet:
    return Packet(int(ms * 1e6), src, "198.18.1.2", 6, 443, 50000, length)


def test_bins_shares_and_jain() -> None:
    servers = {"10.0.0.1": "a", "10.0.0.2": "b"}
    pkts = [_pkt(0, "10.0.0.1", 1000), _pkt(50, "10.0.0.1", 1000),   # bin 0: a only
            _pkt(120, "10.0.0.1", 1000), _pkt(150, "10.0.0.2", 3000),  # bin 1: both
            _pkt(250, "10.0.0.2", 1000), _pkt(260, "10.0.0.1", 1000),  # bin 2: both
            _pkt(390, "10.0.0.2", 500), _pkt(395, "10.9.9.9", 9999)]   # bin 3: b; unknown src
    s = bin_downlink(pkts, servers)
    assert s.bytes == {"a": (2000, 1000, 1000, 0), "b": (0, 3000, 1000, 500)}
    assert s.contention() == (1, 2)
    r = summarize(s)
    assert r.bytes == {"a": 4000, "b": 4500}
    assert r.share["a"] == pytest.approx(2000 / 6000) and r.share["b"] == pytest.approx(4 / 6)
    assert r.mbps["b"] == pytest.approx(4000 * 8 / 0.2 / 1e6)
    assert r.jain == pytest.approx(jain([2000, 4000])) and r.contention_ms == 200
    assert shares_over_time(s)["a"] == [1.0, 0.25, 0.5, 0.0]


def test_stray_packets_after_a_load_do_not_stretch_it() -> None:
    """Side a's load ends in bin 2; a 52-byte FIN at bin 9 (when its browser quits) must not
    make the window run to bin 9, where side b has the link to itself."""
    s = Series(0, 100, {"a": (5000, 5000, 5000, 0, 0, 0, 0, 0, 0, 52),
                        "b": (1000, 1000, 1000, 3000, 3000, 3000, 3000, 3000, 3000, 0)})
    assert s.active("a") == (0, 2)
    assert s.contention() == (0, 2)
    r = summarize(s)
    assert r.share["a"] == pytest.approx(15000 / 18000)


def test_no_overlap_gives_no_share() -> None:
    s = Series(0, 100, {"a": (5, 5, 0, 0), "b": (0, 0, 0, 7)})
    r = summarize(s)
    assert r.share == {"a": None, "b": None} and r.jain is None and r.contention_ms == 0


def test_jain_bounds() -> None:
    assert jain([3.0, 3.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0]) == pytest.approx(0.5)
    assert jain([0.0, 0.0]) is None


def test_mean_share_interval_and_summary_rows() -> None:
    m = mean_share([0.3, 0.32, 0.34, 0.36])
    assert m.mean == pytest.approx(0.33) and m.n == 4
    assert m.low is not None and m.high is not None and m.low < 0.33 < m.high
    assert mean_share([None]).mean is None and mean_share([0.4]).low is None
    rows = [{"pair": "h2:h3", "side": s, "arm": arm, "share": sh, "mbps": 3.0, "jain": 0.9,
             "plt_ms": plt, "connections": 1, "start_ms": lead}
            for s, arm, sh, plt, lead in (("a", "h2", 0.3, 1000.0, 0.0),
                                          ("b", "h3", 0.7, 800.0, 4.5),
                                          ("a", "h2", 0.4, 1200.0, 9.0),
                                          ("b", "h3", 0.6, 900.0, 0.0))]
    out = summary_rows(rows)
    assert [(r["side"], r["arm"], r["n"]) for r in out] == [("a", "h2", 2), ("b", "h3", 2)]
    assert out[0]["share_mean"] == pytest.approx(0.35)
    assert out[1]["plt_median_ms"] == pytest.approx(850.0)
    assert [r["start_ms_max"] for r in out] == [9.0, 4.5]
    assert summary_rows([{**rows[0], "start_ms": None}])[0]["start_ms_max"] is None  # before m017


def test_progress_line_says_each_share_and_how_far_apart_the_sides_started() -> None:
    a = {"side": "a", "arm": "h2", "share": 0.394, "start_ms": 7.4}
    b = {"side": "b", "arm": "h3", "share": 0.606, "start_ms": 0.0}
    assert progress_line("h2:h3", 1, [a, b]) == \
        "h2:h3 rep 1: share h2 0.39  h3 0.61 (side a started 7 ms after the other)"
    assert progress_line("h2:h3", 2, [{**a, "start_ms": 0.3}, b]).endswith(
        "(both sides started within 1 ms)")
    assert progress_line("h2:h3", 3, [{**a, "share": None, "start_ms": None}, b]) == \
        "h2:h3 rep 3: share h2 n/a  h3 0.61"


def test_a_bulk_side_waits_as_long_as_the_browser_side_lagged_in_the_last_try() -> None:
    """The browser side started 26-61 ms after the bulk side on the common start (by hand,
    2026-11-30): the next try's bulk side waits that much more, or less when it was the later."""
    def rows(bulk_ms: float | None, browser_ms: float | None) -> list[dict[str, object]]:
        return [{"side": "a", "arm": "bulk", "start_ms": bulk_ms},
                {"side": "b", "arm": "h1", "start_ms": browser_ms}]

    assert bulk_delay_after(40.0, rows(0.0, 18.5)) == 58.5  # the browser still 18.5 ms late
    assert bulk_delay_after(58.5, rows(12.0, 0.0)) == 46.5  # now the bulk side was the later
    assert bulk_delay_after(10.0, rows(45.0, 0.0)) == 0.0  # never before the common start
    assert bulk_delay_after(40.0, rows(0.0, 5000.0)) == BULK_DELAY_MAX_MS
    assert bulk_delay_after(40.0, rows(0.0, None)) == 40.0  # a failed side tells nothing
    assert bulk_delay_after(40.0, [{"side": "a", "arm": "h2", "start_ms": 0.0},
                                   {"side": "b", "arm": "h3", "start_ms": 20.0}]) == 40.0


def test_a_repetition_whose_sides_started_apart_is_run_again() -> None:
    """The 48 ms a CI run saw is run again; 15 ms (the most measured with the common start) is
    kept; after two more tries the last is kept whatever its start."""
    def rows(lead: float | None) -> list[dict[str, object]]:
        return [{"side": "a", "start_ms": 0.0}, {"side": "b", "start_ms": lead}]

    assert late_start(rows(47.9)) == "side b started 48 ms after the other"
    assert late_start(rows(15.0)) is None and late_start(rows(30.0)) is None
    assert late_start(rows(None)) is None  # a side with no flow is a failed side, not a late one
    for leads, kept, why in (([47.9, 12.0], 12.0, ["side b started 48 ms after the other"]),
                             ([3.0], 3.0, []),
                             ([60.0, 45.0, 41.0, 1.0], 41.0, [
                                 "side b started 60 ms after the other",
                                 "side b started 45 ms after the other"])):
        tries = iter(leads)
        said: list[str] = []
        got = started_together(lambda t=tries: ([], rows(next(t)), []), said.append)
        assert got[1][1]["start_ms"] == kept and said == why
    outcome = FairnessOutcome("c", repetitions=8, rerun=["h2:h2 rep 3: side b started 48 ms"])
    assert outcome.summary() == ("campaign c: 8 fairness repetitions, 0 with a failed side, "
                                 "1 run again (sides started apart)")
    assert "run again" not in FairnessOutcome("c", repetitions=8).summary()


def test_start_lead_is_each_sides_first_packet_after_the_earlier_side() -> None:
    flows = [{"server_ip": "198.18.2.2", "first_ns": 5_000_000_000},
             {"server_ip": "198.18.2.2", "first_ns": 4_990_000_000},
             {"server_ip": "198.18.2.4", "first_ns": 4_997_500_000},
             {"server_ip": "198.18.2.9", "first_ns": 1},  # another server: not a side
             {"server_ip": "198.18.2.4", "first_ns": None}]
    assert start_lead_ms(flows, ["198.18.2.2", "198.18.2.4"]) == [0.0, 7.5]
    assert start_lead_ms(flows, ["198.18.2.4", "198.18.2.7"]) == [0.0, None]


def test_pcap_rejects_garbage() -> None:
    with pytest.raises(PcapError, match="not a pcap file"):
        list(packets(b"hello world, this is not a capture file"))


@pytest.mark.skipif(shutil.which("tcpdump") is None, reason="needs tcpdump (scripts/setup.sh)")
def test_pcap_reader_agrees_with_tcpdump_on_a_real_capture(tmp_path: Path) -> None:
    """Capture real loopback TCP traffic, then compare every packet with ``tcpdump -r``."""
    import os
    if os.geteuid() != 0:
        pytest.skip("capturing needs root")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]

    def serve() -> None:
        conn, _ = srv.accept()
        conn.recv(100)
        for size in (10, 1400, 30000, 7):
            conn.sendall(b"x" * size)
        conn.close()

    pcap = tmp_path / "lo.pcap"
    dump = subprocess.Popen(["tcpdump", "--immediate-mode", "-i", "lo", "-s", "96", "-n", "-U",
                             "-w", str(pcap), f"tcp port {port}"], stderr=subprocess.PIPE)
    assert dump.stderr is not None
    while b"listening on" not in dump.stderr.readline():
        pass
    t = threading.Thread(target=serve)
    t.start()
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"GET")
        while c.recv(65536):
            pass
    t.join()
    time.sleep(0.3)
    dump.terminate()
    dump.wait(10)
    srv.close()
    ours = [(p.ts_ns // 1000, p.src, p.sport, p.dst, p.dport, p.length)
            for p in packets(pcap.read_bytes())]
    out = subprocess.run(["tcpdump", "-r", str(pcap), "-n", "-tt", "-v"], capture_output=True,
                         text=True, check=True).stdout
    theirs = []
    lines = out.splitlines()
    for head, body in zip(lines[::2], lines[1::2], strict=False):
        ts = int(round(float(head.split()[0]) * 1e6))
        length = int(head.split("length ")[-1].rstrip(")"))
        src, dst = body.strip().split(" > ")
        dst = dst.split(":")[0]
        theirs.append((ts, src.rsplit(".", 1)[0], int(src.rsplit(".", 1)[1]),
                       dst.rsplit(".", 1)[0], int(dst.rsplit(".", 1)[1]), length))
    assert len(ours) >= 8 and ours == theirs


def test_wire_connections_count_only_flows_that_carried_payload() -> None:
    """An h1 side of the full fairness run: six connections with data and two one-packet flows
    of 52 bytes each way (a bare ACK/FIN), which the count once took for connections (8)."""
    data = [{"proto": "tcp", "client_port": 35098 + i, "server_ip": "198.18.2.2",
             "bytes_down": 906162, "packets_down": 613} for i in range(6)]
    bare = [{"proto": "tcp", "client_port": p, "server_ip": "198.18.2.2",
             "bytes_down": 52, "packets_down": 1} for p in (37540, 37544)]
    other = [{"proto": "udp", "client_port": 40000, "server_ip": "198.18.2.4",
              "bytes_down": 4_000_000, "packets_down": 3000}]
    assert wire_connections(data + bare + other, "198.18.2.2") == 6
    assert wire_connections(data + bare + other, "198.18.2.4") == 1
    assert wire_connections(bare, "198.18.2.2") == 0


def test_wire_connections_leave_out_a_connection_that_carried_only_its_handshake() -> None:
    """CI's h2:h2 side: its one connection with the page (4.5 MB) and a second one Chromium opened
    and never used (837 bytes down in 7 packets: a resumed TLS handshake); the recorder saw 1.
    And the h1 side of a full run with 6 used connections and two of 323 bytes in 5 packets."""
    h2 = [{"proto": "tcp", "client_port": 41658, "server_ip": "198.18.2.2",
           "bytes_down": 4524486, "packets_down": 3031},
          {"proto": "tcp", "client_port": 41670, "server_ip": "198.18.2.2",
           "bytes_down": 837, "packets_down": 7}]
    assert wire_connections(h2, "198.18.2.2") == 1
    h1 = [{"proto": "tcp", "client_port": 56114 + i, "server_ip": "198.18.2.2",
           "bytes_down": 452579, "packets_down": 310} for i in range(6)]
    h1 += [{"proto": "tcp", "client_port": p, "server_ip": "198.18.2.2",
            "bytes_down": 323, "packets_down": 5} for p in (41550, 41552)]
    assert wire_connections(h1, "198.18.2.2") == 6
    # one small response beyond a handshake still counts
    assert wire_connections([{"proto": "tcp", "client_port": 1, "server_ip": "198.18.2.2",
                              "bytes_down": 9000, "packets_down": 8}], "198.18.2.2") == 1


@pytest.mark.parametrize("n", [4, 10])
def test_mean_share_interval_covers_the_true_share_95_percent_of_the_time(n: int) -> None:
    """Equal sides (true share 0.5), n repetitions with spread 0.1, 1,000 simulated runs: the
    interval must hold 0.5 about 95% of the time. The percentile bootstrap it replaced held it
    78% of the time at n=4 and 90% at n=10, so identical arms looked unequal in CI."""
    rng = np.random.default_rng(7)
    runs = 1000
    held = 0
    for _ in range(runs):
        m = mean_share(list(rng.normal(0.5, 0.1, n)))
        assert m.low is not None and m.high is not None
        held += m.low <= 0.5 <= m.high
    assert 0.92 <= held / runs <= 0.98, held / runs
