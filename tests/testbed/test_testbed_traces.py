"""Mahimahi traces on the real testbed (root, namespaces, caddy, the shaper), with traces the
test writes itself (no third-party trace ships): a constant-rate trace gives its rate within 2%,
measured by iperf3 at the client and by the shaper's counters; a trace with a 1 s gap stalls a
download for 1 s, seen in tcpdump's timestamps at the client."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from tests.testbed.conftest import in_client, lab_available

pytestmark = pytest.mark.netns
NAME = "pltr"
MSS_WIRE = 1500 / 1448
"""IP bytes per TCP payload byte for full segments (20 IP + 20 TCP + 12 timestamp option)."""


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    from protolens.testbed import Testbed

    d = tmp_path_factory.mktemp("traces")
    prof = d / "tracelink.toml"
    prof.write_text('name = "tracelink"\n[link]\nrtt_ms = 20\nbuffer_bytes = 150000\n')
    Testbed.down(NAME)
    tb = Testbed.up(name=NAME, profile=str(prof), server_cc="cubic")
    try:
        yield tb, d
    finally:
        Testbed.down(NAME)


def shape(tb: Any, *args: str) -> str:
    r = CliRunner().invoke(main, ["testbed", "shape", "--name", NAME, *args])
    assert r.exit_code == 0, r.output
    return r.output.strip()


def test_a_constant_rate_trace_gives_its_rate(bed: Any) -> None:
    tb, d = bed
    trace = d / "const20.down"
    trace.write_text("1\n1\n2\n3\n3\n")  # 5 MTUs every 3 ms = 20 Mbit/s
    out = shape(tb, "--trace-down", str(trace))
    assert out == f"shaping with tracelink, down trace {trace} (20 Mbit/s mean)"
    from protolens.testbed import Testbed

    st = Testbed.load(NAME).status()  # the CLI changed the state file
    assert st["trace_down"] == str(trace) and st["trace_up"] is None
    tb.flush_tcp_metrics()
    srv = subprocess.Popen(tb.server_argv(["iperf3", "-s", "-1", "-B", tb.state.server_ip,
                                           "-p", "5310"]), stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    cli = subprocess.Popen(tb.exec_argv(["iperf3", "-c", tb.state.server_ip, "-p", "5310", "-R",
                                         "-P", "3", "-t", "6", "-i", "0.5", "-J"]),
                           stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)
        a = tb.stats()
        time.sleep(3.0)
        b = tb.stats()
        report = json.loads(cli.communicate(timeout=30)[0])
    finally:
        srv.wait(timeout=10)
    shaper_bps = (sum(f["bytes_down"] for f in b["flows"]) - sum(
        f["bytes_down"] for f in a["flows"])) * 8 / ((b["now_ns"] - a["now_ns"]) / 1e9)
    mid = [iv["sum"] for iv in report["intervals"] if 1.5 <= iv["sum"]["start"] < 5.5]
    iperf_bps = sum(s["bytes"] for s in mid) * 8 / sum(s["seconds"] for s in mid) * MSS_WIRE
    assert abs(iperf_bps / 20e6 - 1) < 0.02, f"iperf3 {iperf_bps / 1e6:.3f} Mbit/s (IP level)"
    assert abs(shaper_bps / 20e6 - 1) < 0.02, f"shaper {shaper_bps / 1e6:.3f} Mbit/s"
    assert b["traces"]["down"]["opportunities"] == 5 and b["traces"]["up"] is None
    from protolens.shaper.calibration import Calibration

    cut = Calibration.from_dict(st["calibration"]).path_rtt_ns(20_000_000)  # the path's own RTT
    assert b["dirs"]["down"]["params"]["delay_ns"] == 10_000_000 - (cut - cut // 2)


def test_a_one_second_gap_stalls_a_download_for_one_second(bed: Any) -> None:
    tb, d = bed
    trace = d / "gap.down"  # 12 Mbit/s for 1 s, nothing for 1 s, 12 Mbit/s for 1 s, looped
    trace.write_text("".join(f"{ms}\n" for ms in [*range(1, 1001), *range(2000, 3001)]))
    pcap = d / "gap.pcap"
    dump = subprocess.Popen(tb.exec_argv(["tcpdump", "-i", tb.topo.cli_if, "-n", "-s", "96",
                                          "-U", "--immediate-mode", "-w", str(pcap),
                                          "tcp", "and", "src", "port", "443"]),
                            stderr=subprocess.PIPE, text=True)
    assert dump.stderr is not None and "listening" in dump.stderr.readline()
    # a buffer larger than the whole download: no packet is ever dropped, so data waits in the
    # queue at every gap's end and the stall seen at the client is the trace's alone (with the
    # 150 kB buffer a CI run read a 3.46 s stall: a gap that met the sender recovering from a
    # drop adds TCP's retransmission back-off to the trace's second)
    deep = d / "tracegap.toml"
    deep.write_text('name = "tracegap"\n[link]\nrtt_ms = 20\nbuffer_bytes = 8000000\n')
    shape(tb, str(deep), "--trace-down", str(trace))
    tb.flush_tcp_metrics()
    p = in_client(tb, ["curl", "-s", "--cacert", tb.state.ca, "-o", "/dev/null", "-w",
                       "%{time_total}", "https://a.test/_testbed/5m.bin"], timeout=60)
    dump.send_signal(signal.SIGTERM)
    dump.wait(timeout=10)
    assert p.returncode == 0, p.stderr
    times = [float(line.split()[0]) for line in subprocess.run(
        ["tcpdump", "-r", str(pcap), "-tt", "-n"], capture_output=True, text=True
    ).stdout.splitlines() if line.strip()]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    stalls = [(a, g) for a, g in zip(times, gaps, strict=False) if g > 0.1]
    # 5 MB at 12 Mbit/s two thirds of the time takes about 5 s: one or two of the looped gaps,
    # each a stall of 1 s, 3 s apart; elsewhere packets follow the trace's 1 ms spacing
    assert 1 <= len(stalls) <= 2, stalls
    assert all(0.99 <= g <= 1.02 for _, g in stalls), stalls
    if len(stalls) == 2:
        assert abs(stalls[1][0] - stalls[0][0] - 3.0) < 0.02, stalls
    assert float(p.stdout) > 4.4, p.stdout
