"""``protolens cc probe`` (adapter): fetch one object with curl from the client namespace through
the shaper set up as Igor's bottleneck (CoNEXT'20 Sec. 4.1), read the shaper's queue log and the
flow's first drop, and hand them to the pure classifier.

Steps: (1) a HEAD through an unshaped path gives the final URL, the object's size and the TCP
handshake time (the base RTT); (2) the packet size follows from the size, the client route's
``advmss`` asks the server for it (ARCHITECTURE.md); (3) the bottleneck profile pads the RTT;
(4) the GET runs with the queue log restarted; (5) route and profile are put back whatever
happens."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protolens.cc import bottleneck
from protolens.cc.classify import classify
from protolens.cc.curl import (
    ProbeError,
    content_length,
    get_argv,
    head_argv,
    parse_result,
    parse_target,
)
from protolens.cc.model import QueueTimeline, Verdict
from protolens.shaper.catalogue import load_profile
from protolens.shaper.control import ShaperClient, ShaperError
from protolens.shaper.records import Profile

GET_TIMEOUT_S = 60.0


class ProbePath(Protocol):
    """What a probe needs from the lab network (``Testbed`` and the ``wan`` variant)."""

    def exec_argv(self, cmd: Sequence[str] = ()) -> list[str]: ...
    def shaper(self) -> ShaperClient: ...
    def shape(self, profile: str | Profile) -> Profile: ...
    def set_advmss(self, mss: int | None) -> None: ...
    def flush_tcp_metrics(self) -> None: ...
    def current_profile(self) -> str: ...
    def ca(self) -> str | None: ...
    def server_cc(self, ip: str) -> str | None: ...


@dataclass(frozen=True)
class ProbeResult:
    url: str
    """The object fetched (after redirects)."""
    requested_url: str
    host: str
    server_ip: str
    http_version: str
    size_bytes: int | None
    """Content-Length from the HEAD, if the server gave one."""
    measured_rtt_ms: float
    probed_at_ms: float
    wall_ms: float
    timeline: QueueTimeline
    verdict: Verdict
    server_cc: str | None
    """The true CC when the probe ran on the testbed (ground truth), else None."""
    request_ns: int
    """Wall clock (ns) when the request left: time 0 of the timeline."""

    def row(self) -> dict[str, Any]:
        e = self.verdict.evidence
        return {"host": self.host, "server_ip": self.server_ip, "label": self.verdict.label,
                "reason": self.verdict.reason, "max_queue_bytes": e.max_queue_bytes,
                "max_queue_fraction": round(e.max_queue_fraction, 3),
                "time_to_max_ms": e.time_to_max_ms, "first_loss_ms": e.first_loss_ms,
                "bytes": e.bytes, "mss": e.mss, "packet_bytes": self.timeline.packet_bytes,
                "rtt_ms": e.rtt_ms, "measured_rtt_ms": round(self.measured_rtt_ms, 2),
                "transfer_ms": e.transfer_ms, "http_version": self.http_version,
                "url": self.url, "server_cc": self.server_cc,
                "probed_at_ms": self.probed_at_ms, "wall_ms": round(self.wall_ms, 1)}


def _curl(path: ProbePath, argv: list[str], timeout: float
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        p = subprocess.run(path.exec_argv(argv), capture_output=True, text=True,
                           timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        raise ProbeError(f"timed out after {timeout:g} s") from None
    return parse_result(p.returncode, p.stdout, p.stderr)


def probe(path: ProbePath, url: str, *, http: str = "1.1", packet_bytes: int | None = None,
          now: Callable[[], float] = time.time) -> ProbeResult:
    """Fingerprint the server of ``url``; ``ProbeError`` (one line) if it cannot be fetched."""
    target = parse_target(url)
    started = now()
    previous = path.current_profile()
    if previous.startswith("<"):  # a probe killed mid-way left its own in-memory profile
        previous = "clean"
    try:
        path.set_advmss(None)
        path.shape(load_profile("clean"))
        info, headers = _curl(path, head_argv(target.url, 30.0, path.ca()), 30.0)
        final = str(info.get("url_effective") or target.url)
        parse_target(final)
        size = content_length(headers)
        measured = max(0.0, (float(info.get("time_connect", 0))
                             - float(info.get("time_namelookup", 0))) * 1000)
        pkt = packet_bytes or bottleneck.packet_bytes_for(size)
        mss = bottleneck.advmss(pkt)
        rtt = bottleneck.padded_rtt_ms(measured)
        path.set_advmss(mss)
        path.shape(bottleneck.profile(pkt, rtt - measured))
        path.flush_tcp_metrics()
        shaper = path.shaper()
        shaper.stats(reset=True)
        shaper.queue_reset()
        got, _ = _curl(path, get_argv(final, http, GET_TIMEOUT_S, path.ca()), GET_TIMEOUT_S)
        qlog, stats = shaper.queue(), shaper.stats()
    except ShaperError as exc:
        raise ProbeError(str(exc)) from None
    finally:
        path.set_advmss(None)
        path.shape(previous)
    timeline, transfer_ms, request_ns = _timeline(qlog, stats, got, pkt)
    body = int(got.get("size_download") or 0)
    verdict = classify(timeline, body, mss, float(rtt), transfer_ms)
    server_ip = str(got.get("remote_ip") or "")
    return ProbeResult(url=final, requested_url=url, host=target.host, server_ip=server_ip,
                       http_version=str(got.get("http_version") or ""), size_bytes=size,
                       measured_rtt_ms=measured, probed_at_ms=started * 1000,
                       wall_ms=(now() - started) * 1000, timeline=timeline, verdict=verdict,
                       server_cc=path.server_cc(server_ip), request_ns=request_ns)


def _timeline(qlog: dict[str, Any], stats: dict[str, Any], got: dict[str, Any], pkt: int
              ) -> tuple[QueueTimeline, float, int]:
    """The down queue's samples relative to the moment the request left (ms)."""
    port = int(got.get("local_port") or 0)
    flow = next((f for f in stats.get("flows", []) if int(f["proto"]) == 6
                 and int(f["client_port"]) == port), None)
    if flow is None:
        raise ProbeError(f"the shaper saw no TCP flow from client port {port}: is the client's "
                         "traffic going through the shaper?")
    pre = float(got.get("time_pretransfer", 0)) - float(got.get("time_namelookup", 0))
    t0_ns = int(flow["first_ns"]) + int(pre * 1e9)
    down = qlog["dirs"]["down"]
    drop_ns = int(flow.get("first_drop_down_ns") or 0)
    first_drop = (drop_ns - t0_ns) / 1e6 if drop_ns else None
    timeline = QueueTimeline(
        interval_ms=int(qlog["interval_ns"]) / 1e6, queue_bytes=tuple(down["bytes"]),
        t0_ms=(int(qlog["start_ns"]) - t0_ns) / 1e6, buffer_bytes=int(down["buffer_bytes"]),
        rate_bps=int(down["rate_bps"]),
        packet_bytes=pkt, first_drop_ms=first_drop, drops=int(down["drops"]))
    transfer = (float(got.get("time_total", 0)) - float(got.get("time_pretransfer", 0))) * 1000
    return timeline, transfer, t0_ns
