"""The NetLog reader (scripts/devkit/netlog.py) on a real log: Chromium 156 loading the real-web
site under the h3 arm (tests/fixtures/netlog/realweb-h3.json, cut by ``netlog.trim`` to four
connections), checked against caddy's access log of the same run (realweb-h3.caddy.log)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from scripts.devkit.caddylog import read_hits
from scripts.devkit.netlog import is_complete, read_connections, read_events, trim

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/netlog"
LOG = FIXTURES / "realweb-h3.json"


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
