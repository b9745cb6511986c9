"""The network lab end to end (root, namespaces): one testbed for the module, real caddy, real
shaper, real clients. Checks the issue's acceptance list: RTT, rate, loss, no reordering,
schedule timing, flow counters against tcpdump, h1/h2/h3 fetches, errors, a dead shaper."""

from __future__ import annotations

import json
import re
import signal
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from tests.testbed.conftest import in_client, python_in

pytestmark = pytest.mark.netns

CA_CURL = ["curl", "-s", "--cacert"]


def ping_rtts(tb: Any, count: int, interval: float = 0.02) -> list[tuple[float, float]]:
    """(receive wall time s, rtt ms) per reply, via ping -D in the client namespace."""
    p = in_client(tb, ["ping", "-D", "-n", "-c", str(count), "-i", str(interval), "-W", "2",
                       tb.state.server_ip])
    out = []
    for m in re.finditer(r"^\[([\d.]+)\].*time=([\d.]+) ms", p.stdout, re.M):
        out.append((float(m.group(1)), float(m.group(2))))
    return out


def test_status_json_has_what_campaigns_need(lab: Any) -> None:
    r = CliRunner().invoke(main, ["testbed", "status", "--name", "plt", "--json"])
    assert r.exit_code == 0, r.output
    st = json.loads(r.output)
    for key in ("namespaces", "hosts", "server_ip", "spki", "profile", "server_cc", "access_log",
                "client_ns"):
        assert st[key], key
    assert st["namespaces"] == {"client": "plt-cli", "router": "plt-rtr", "server": "plt-srv"}
    assert st["profile"] == "wifi" and st["server_cc"] == "cubic"
    assert st["shaper"]["running"] and st["shaper"]["rt"]
    assert st["shaper"]["params"]["down"]["rate_bps"] == 7_000_000
    srv_cc = subprocess.run(lab.server_argv(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]),
                            capture_output=True, text=True).stdout.strip()
    assert srv_cc == "cubic"
    ext = in_client(lab, ["ethtool", "-k", "plt-c0"]).stdout
    assert "tcp-segmentation-offload: off" in ext and "generic-receive-offload: off" in ext


def test_exec_runs_in_the_client_namespace(lab: Any) -> None:
    p = subprocess.run([sys.executable, "-m", "protolens.cli", "testbed", "exec", "--name", "plt",
                        "--", "ip", "-4", "-brief", "addr", "show", "plt-c0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    assert "198.18.1.2/24" in p.stdout


def test_ping_rtt_under_wifi_is_50ms(lab: Any) -> None:
    lab.shape("wifi")
    rtts = [r for _, r in ping_rtts(lab, 40)]
    assert len(rtts) >= 38
    # the median of the replies after the first: the first was 59.4 ms once in a local CI run
    # (the next ones 50.2-52.7; cause not found: the neighbour's address, the shaper's first
    # packet?), which moved a mean of 40 by 0.24 ms; one slow reply moves a mean, not the RTT
    # the shaper holds
    print(f"ping RTTs under wifi, ms: {rtts}")
    assert abs(statistics.median(rtts[1:]) - 50.0) <= 1.0, rtts


def test_up_measures_the_path_latency_and_subtracts_it(lab: Any) -> None:
    """``up`` pings through the shaper holding two probe RTTs; each median's excess over its
    RTT is the path's own RTT there, recorded in the state and taken off configured delays."""
    from protolens.shaper.calibration import Calibration
    from protolens.testbed import Testbed

    lab.shape("wifi")
    cal = lab.state.calibration
    assert cal is not None and [p["rtt_ns"] for p in cal["probes"]] == [2_000_000, 9_000_000]
    for p in cal["probes"]:
        assert p["replies"] >= 40 and 0 < p["path_rtt_ns"] < 5_000_000
        assert p["median_rtt_ns"] == p["rtt_ns"] + p["path_rtt_ns"]
    status = Testbed.load("plt").status()
    assert status["calibration"] == cal and status["calibrated"] is True
    params = status["shaper"]["params"]
    cut = Calibration.from_dict(cal).path_rtt_ns(50_000_000)
    assert cut == cal["probes"][1]["path_rtt_ns"]
    assert params["up"]["delay_ns"] == 25_000_000 - cut // 2
    assert params["down"]["delay_ns"] == 25_000_000 - (cut - cut // 2)
    lab.shape("wifi", calibrated=False)
    assert lab.stats()["dirs"]["down"]["params"]["delay_ns"] == 25_000_000
    assert Testbed.load("plt").status()["calibrated"] is False
    lab.shape("wifi")


def _down_bytes(stats: dict[str, Any]) -> int:
    return sum(f["bytes_down"] for f in stats["flows"] if f["server_port"] == 443)


def test_transfer_reaches_the_profile_rate(lab: Any) -> None:
    """Three parallel downloads keep the 7 Mbit/s bottleneck busy; the delivered IP bytes per
    second between two counter readings must be within 5% of the rate."""
    lab.shape("wifi")
    lab.flush_tcp_metrics()
    procs = [subprocess.Popen(lab.exec_argv([*CA_CURL, lab.state.ca, "-o", "/dev/null",
                                              f"https://{h}/_testbed/1m.bin"]))
             for h in lab.state.hosts[:3]]
    try:
        time.sleep(1.0)
        a = lab.stats()
        time.sleep(1.5)
        b = lab.stats()
    finally:
        for p in procs:
            p.wait(timeout=30)
    rate = (_down_bytes(b) - _down_bytes(a)) * 8 / ((b["now_ns"] - a["now_ns"]) / 1e9)
    assert abs(rate / 7e6 - 1) < 0.05, f"{rate / 1e6:.3f} Mbit/s"


def _udp(lab: Any, direction: str, count: int, rate: float, port: int) -> dict[str, Any]:
    """Send ``count`` numbered datagrams up (client -> server) or down; return the receiver's
    arrival order and one-way delays."""
    rx_ns = lab.server_argv() if direction == "up" else lab.exec_argv()
    tx_ns = lab.exec_argv() if direction == "up" else lab.server_argv()
    dst = lab.state.server_ip if direction == "up" else lab.state.client_ip
    rx = subprocess.Popen(python_in(rx_ns, "udp_tool.py", "recv", str(port), str(count), "2"),
                          stdout=subprocess.PIPE, text=True)
    assert rx.stdout is not None
    assert rx.stdout.readline().strip() == "ready"
    subprocess.run(python_in(tx_ns, "udp_tool.py", "send", dst, str(port), str(count), str(rate)),
                   check=True, timeout=60)
    out, _ = rx.communicate(timeout=30)
    result: dict[str, Any] = json.loads(out)
    return result


def test_two_percent_loss_over_10000_packets(lab: Any) -> None:
    lab.shape("wifi-lossy")
    lab.truth(reset=True)
    got = _udp(lab, "up", 10_000, 4000, 40001)
    loss = 1 - len(got["seqs"]) / 10_000
    assert 0.015 <= loss <= 0.025, loss
    flow = next(f for f in lab.truth() if f["proto"] == "udp" and f["server_port"] == 40001)
    assert flow["drops_up"] == 10_000 - len(got["seqs"])
    assert flow["packets_up"] == len(got["seqs"])
    lab.shape("wifi")


def test_jitter_never_reorders(lab: Any) -> None:
    lab.shape("jitter")
    got = _udp(lab, "down", 2000, 1000, 40002)
    lab.shape("wifi")
    seqs, owd = got["seqs"], got["owd_ns"]
    assert len(seqs) >= 1990
    assert all(a < b for a, b in zip(seqs, seqs[1:], strict=False)), "reordered"
    spread_ms = (max(owd) - min(owd)) / 1e6
    assert spread_ms > 50, f"one-way delay barely varies ({spread_ms:.1f} ms): no jitter applied"


def test_schedule_change_takes_effect_within_one_step(lab: Any, tmp_path: Path) -> None:
    prof = tmp_path / "step.toml"
    prof.write_text('[link]\nrtt_ms = 20\n[schedule]\nkind = "steps"\nloop = false\n'
                    'steps = [{at_ms = 400, rtt_ms = 100}]\n')
    lab.shape(str(prof))
    start = lab.stats()["schedule_started_ns"] / 1e9
    replies = ping_rtts(lab, 60, 0.015)
    lab.shape("wifi")
    before = [rtt for t, rtt in replies if t - rtt / 1e3 - start < 0.39]
    after = [rtt for t, rtt in replies if t - rtt / 1e3 - start > 0.40 + 0.07]
    assert len(before) >= 5 and len(after) >= 5, replies
    # a reply before the step never has the new delay (100 ms), and nine in ten have the old
    # one (20 ms): a stall outside the shaper only adds to a ping's time (one CI run read one
    # of 27.0 ms before the step, the first ones 20.1-20.8), so the strict bound is the lower one
    assert max(before) < 60 and sum(r < 25 for r in before) >= 0.9 * len(before), before
    assert min(after) > 95, after


def read_pcap(path: Path) -> list[tuple[str, str, int, int, int]]:
    """(src, dst, sport, dport, ip_total_length) of every IPv4 TCP/UDP packet (Ethernet)."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 38 or pkt[12:14] != b"\x08\x00":
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 15) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
        sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
        out.append((src, dst, sport, dport, total))
    return out


def test_flow_counters_match_tcpdump(lab: Any, tmp_path: Path) -> None:
    lab.shape("wifi")
    pcap = tmp_path / "c.pcap"
    dump = subprocess.Popen(lab.exec_argv(["tcpdump", "-i", "plt-c0", "-n", "-s", "96", "-U",
                                           "--immediate-mode", "-B", "8192",
                                           "-w", str(pcap), "tcp", "port", "443"]),
                            stderr=subprocess.PIPE, text=True)
    assert dump.stderr is not None
    assert "listening" in dump.stderr.readline()
    lab.truth(reset=True)
    for args in (["--http1.1"], ["--http2"]):
        p = in_client(lab, [*CA_CURL, lab.state.ca, *args, "-o", "/dev/null",
                            "https://b.test/_testbed/333k.bin"])
        assert p.returncode == 0, p.stderr
    time.sleep(0.3)
    flows = [f for f in lab.truth(reset=True) if f["proto"] == "tcp"]
    dump.send_signal(signal.SIGTERM)
    dump.wait(timeout=10)
    cap: dict[int, dict[str, int]] = {}
    for src, _dst, sport, dport, length in read_pcap(pcap):
        up = src == lab.state.client_ip
        c = cap.setdefault(sport if up else dport, {"up": 0, "down": 0})
        c["up" if up else "down"] += length
    assert len(flows) == 2 and set(cap) == {f["client_port"] for f in flows}
    for f in flows:
        c = cap[f["client_port"]]
        assert f["bytes_down"] > 333_000
        assert abs(f["bytes_down"] / c["down"] - 1) < 0.01, (f, c)
        assert abs(f["bytes_up"] / c["up"] - 1) < 0.01, (f, c)


def _log_lines(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def test_h1_h2_h3_clients_fetch_from_the_client_namespace(lab: Any) -> None:
    lab.shape("wifi")
    seen = len(_log_lines(lab.state.access_log))
    ports = {}
    for proto, args in (("1.1", ["--http1.1"]), ("2", ["--http2"])):
        p = in_client(lab, [*CA_CURL, lab.state.ca, *args, "-o", "/dev/null", "-w",
                            "%{http_version} %{http_code} %{local_port}",
                            "https://a.test/_testbed/index.html"])
        version, code, port = p.stdout.split()
        assert (version, code) == (proto, "200"), p.stderr
        ports[proto] = int(port)
    httpx_code = ("import httpx,sys; r=httpx.Client(http2=True, verify=sys.argv[1])"
                  ".get('https://b.test/_testbed/100k.bin'); print(r.http_version, r.status_code,"
                  " len(r.content))")
    p = in_client(lab, [sys.executable, "-c", httpx_code, lab.state.ca])
    assert p.stdout.split() == ["HTTP/2", "200", "100000"], p.stderr
    p = subprocess.run(python_in(lab.exec_argv(), "h3get.py", "c.test", "/_testbed/100k.bin",
                                 lab.state.ca), capture_output=True, text=True, timeout=60)
    assert json.loads(p.stdout) == {"status": "200", "bytes": 100000}, p.stderr
    new = _log_lines(lab.state.access_log)[seen:]
    protos = [(e["request"]["proto"], e["request"]["host"]) for e in new]
    assert ("HTTP/1.1", "a.test") in protos and ("HTTP/2.0", "a.test") in protos
    assert ("HTTP/2.0", "b.test") in protos and ("HTTP/3.0", "c.test") in protos
    h1 = next(e for e in new if e["request"]["proto"] == "HTTP/1.1")
    assert int(h1["request"]["remote_port"]) == ports["1.1"]


def test_flush_tcp_metrics(lab: Any) -> None:
    # This kernel caches no metrics for these short connections (seen empty before and after a
    # lossy download), so the check is that the flush runs in both namespaces and fails loudly
    # on a namespace that is gone.
    r = CliRunner().invoke(main, ["testbed", "flush", "--name", "plt"])
    assert r.exit_code == 0, r.output
    for ns in ("plt-cli", "plt-srv"):
        show = subprocess.run(["ip", "-n", ns, "tcp_metrics", "show"], capture_output=True,
                              text=True)
        assert show.returncode == 0 and show.stdout.strip() == ""
    from protolens.testbed import Testbed, TestbedError

    ghost = Testbed(lab.state.__class__(**{**lab.state.__dict__, "name": "plghost"}), lab.root)
    with pytest.raises(TestbedError, match="plghost-cli"):
        ghost.flush_tcp_metrics()


def test_tcpstats_samples_the_server_socket(lab: Any, tmp_path: Path) -> None:
    out = tmp_path / "cwnd.jsonl"
    dl = subprocess.Popen(lab.exec_argv([*CA_CURL, lab.state.ca, "-o", "/dev/null",
                                         "https://a.test/_testbed/1m.bin"]))
    r = CliRunner().invoke(main, ["testbed", "tcpstats", "--name", "plt", "--duration", "1",
                                  "--out", str(out)])
    dl.wait(timeout=30)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) >= 20
    assert all(r["local_port"] == 443 and r["cc"] == "cubic" for r in rows)
    assert max(r["cwnd"] for r in rows) > 10
    ts = [r["t_ns"] for r in rows]
    assert ts == sorted(ts)


def test_bad_profile_is_a_one_line_error(lab: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[link]\nrate_mbit = 7\nloss = 5\n")
    r = CliRunner().invoke(main, ["testbed", "shape", "--name", "plt", str(bad)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: {bad}: link.loss must be between 0 and 1 (a fraction, not a percentage), got 5"]
    r = CliRunner().invoke(main, ["testbed", "up", "--name", "plz", "--profile", "nope"])
    assert r.exit_code == 2 and "unknown profile 'nope'" in r.output
    assert "plz-" not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                        text=True).stdout
    assert lab.status()["profile"] == "wifi"  # the running profile is untouched


def test_ecmp_hashes_flows_onto_paths(lab: Any) -> None:
    lab.shape("ecmp")
    lab.truth(reset=True)
    for port in (45000, 45001):
        in_client(lab, [*CA_CURL, lab.state.ca, "--local-port", str(port), "-o", "/dev/null",
                        "https://a.test/_testbed/index.html"])
    flows = {f["client_port"]: f for f in lab.truth() if f["server_port"] == 443}
    lab.shape("wifi")
    assert flows[45000]["path"] != flows[45001]["path"]
    assert flows[45000]["path"] == (0xC6120102 ^ 0xC6120202 ^ 45000 ^ 443 ^ 6) % 2


def test_dead_shaper_is_detected_and_reported(lab: Any) -> None:
    import os

    pid = lab.state.pids["shaper"]
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    r = CliRunner().invoke(main, ["testbed", "status", "--name", "plt", "--json"])
    assert r.exit_code == 2
    assert "shaper not running" in r.output
    r = CliRunner().invoke(main, ["testbed", "truth", "--name", "plt"])
    assert r.exit_code == 2 and "shaper not running" in r.output
    # --queue-bypass: traffic still flows (unshaped) rather than hanging
    rtts = [rtt for _, rtt in ping_rtts(lab, 5)]
    assert len(rtts) == 5 and max(rtts) < 10
    lab.shape("wifi")  # restarts it
    assert lab.shaper_running() and lab.state.pids["shaper"] != pid
    rtts = [rtt for _, rtt in ping_rtts(lab, 5)]
    assert min(rtts) > 49
