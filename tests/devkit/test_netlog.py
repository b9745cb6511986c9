"""The NetLog reader (scripts/devkit/netlog.py) on real logs: Chromium 156 loading the real-web
site under the h3 arm (tests/fixtures/netlog/realweb-h3.json, cut by ``netlog.trim`` to four
connections) and the h2 arm (realweb-h2.json, three connections), each checked against caddy's
access log of the same run (realweb-h3.caddy.log, realweb-h2.caddy.log: request headers
dropped)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from scripts.devkit.caddylog import read_hits
from scripts.devkit.netlog import is_complete, read_connections, read_events, read_wire, trim

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/netlog"
LOG = FIXTURES / "realweb-h3.json"
H2_LOG = FIXTURES / "realweb-h2.json"


def _bodies(log: str) -> tuple[dict[int, int], dict[int, int]]:
    """Per client port: the body bytes caddy wrote, and its responses."""
    body: dict[int, int] = defaultdict(int)
    responses: dict[int, int] = defaultdict(int)
    for h in read_hits(FIXTURES / log):
        body[h.client_port] += h.size
        responses[h.client_port] += 1
    return body, responses


def test_every_client_port_in_caddys_log_is_a_connection_of_the_same_transport() -> None:
    conns = read_connections(LOG)
    hits = read_hits(FIXTURES / "realweb-h3.caddy.log")
    body: dict[int, int] = defaultdict(int)
    for h in hits:
        body[h.client_port] += h.size
        assert conns[h.client_port].kind == ("quic" if h.family == "h3" else "tcp"), h
    for port, size in body.items():
        conn = conns[port]
        # the wire carries at least the bodies caddy wrote, plus headers and framing
        assert conn.bytes_in > size
        assert size <= conn.app_in <= conn.bytes_in
        if conn.kind == "tcp":
            assert conn.tls and conn.app_in == conn.plain_in
    assert {h.host for h in hits if h.family == "h3"} == {conns[p].host for p in body
                                                         if conns[p].kind == "quic"}


def test_a_quic_session_whose_handshake_failed_is_seen_and_carried_nothing() -> None:
    failed = [c for c in read_connections(LOG).values() if c.kind == "quic" and not c.stream_frames]
    assert len(failed) == 1
    assert failed[0].host == "d.test" and failed[0].stream_bytes == 0 and failed[0].error
    assert "CERTIFICATE_VERIFY_FAILED" in failed[0].error
    carried = [c for c in read_connections(LOG).values() if c.kind == "quic" and c.stream_frames]
    assert carried and all(c.stream_bytes > 0 for c in carried)


def test_a_log_cut_off_mid_line_reads_up_to_the_cut(tmp_path: Path) -> None:
    text = LOG.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) - 40])  # the last event's line is half written
    _, whole = read_events(LOG)
    _, partial = read_events(cut)
    assert partial == whole[:-1]
    closed = tmp_path / "closed.json"
    closed.write_text(text.rstrip().rstrip(",") + "]}\n")  # an older browser's closing
    assert read_events(closed)[1] == whole
    # as Chromium 156 closes it on Browser.close (seen here: the last event, then the polled
    # state on a line of its own)
    polled = tmp_path / "polled.json"
    polled.write_text(text.rstrip().rstrip(",") + '],\n"polledData": [{"x":1}]\n}\n')
    assert read_events(polled)[1] == whole
    assert not is_complete(LOG) and not is_complete(cut)
    assert is_complete(closed) and is_complete(polled)


def test_trim_keeps_what_the_reader_uses(tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    port = next(p for p, c in read_connections(LOG).items() if c.kind == "quic" and c.stream_frames)
    assert trim(LOG, small, {port}) > 0
    assert read_connections(small) == {port: read_connections(LOG)[port]}


def test_not_a_netlog_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "x.json"
    other.write_text('{"events": []}\n')
    with pytest.raises(ValueError, match="not a NetLog"):
        read_events(other)


def test_http2_control_frames_are_not_response_bytes() -> None:
    conns = read_connections(H2_LOG)
    body, responses = _bodies("realweb-h2.caddy.log")
    assert set(body) == set(conns)
    for port, conn in conns.items():
        # each connection got the server's SETTINGS (4 settings: 33 bytes), its ACK of ours (9)
        # and a WINDOW_UPDATE (13); the rest is the responses' HEADERS and DATA frames
        assert conn.control_in >= 55, conn
        assert conn.request_in == conn.app_in - conn.control_in
        # at least the bodies, a 9-byte header for each DATA frame and a HEADERS frame (a 9-byte
        # header and a payload) for each response
        assert conn.request_in >= body[port] + 9 * responses[port] + 10 * responses[port], conn
    # /px/'s connection: two 302s and a 204 beacon, no body; TLS handed up its plaintext in five
    # reads: 33 (SETTINGS), 22 (WINDOW_UPDATE, SETTINGS ACK), 103 and 40 (the 302s' HEADERS), 68
    # (a PING ACK of 17, a WINDOW_UPDATE of 13 for the beacon's body, the 204's HEADERS of 38)
    px = conns[37556]
    assert (px.app_in, px.control_in, px.request_in) == (266, 85, 103 + 40 + 38)


def test_http3_request_streams_are_its_response_bytes() -> None:
    body, responses = _bodies("realweb-h3.caddy.log")
    quic = [(p, c) for p, c in read_connections(LOG).items()
            if c.kind == "quic" and c.stream_frames]
    assert quic
    for port, conn in quic:
        # the client's bidirectional streams (ids 0, 4, ...) carry the responses; the server's
        # control stream (id 3) carries its SETTINGS, never a response
        assert set(conn.stream_ends) >= {0, 3}
        assert body[port] < conn.request_in < conn.stream_bytes, conn
        assert len([s for s in conn.stream_ends if s % 4 == 0]) == responses[port]


def test_caddys_connections_are_the_netlogs_by_both_ports_and_transport() -> None:
    # (client port, server port, QUIC): a local port alone can name two connections
    for log, caddy in ((LOG, "realweb-h3.caddy.log"), (H2_LOG, "realweb-h2.caddy.log")):
        conns = read_wire(log)
        hits = read_hits(FIXTURES / caddy)
        assert {h.conn for h in hits} <= set(conns), (set(conns), {h.conn for h in hits})
        assert all(conns[h.conn].kind == ("quic" if h.family == "h3" else "tcp") for h in hits)
