"""The proxy's sans-io cores without sockets: CONNECT decisions and refusals, credentials,
round-robin assignment, flow-control chunking on real h2 state machines, header translation,
the lab's per-load rules and the attribution of upstream connections to navigations."""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest

from protolens.arms import Arm
from protolens.lab.proxied import applied, arm_rules, split_by_navigation
from protolens.policy.rules import make_rule
from protolens.proxy.core import (
    Intercept,
    Refuse,
    RoundRobin,
    Tunnel,
    basic_credential,
    check_basic,
    decide,
    environ_has_token,
    is_loopback,
    next_chunk,
    parse_authority,
    request_from_h1,
    request_from_h2,
    request_to_h1,
    request_to_h2,
    response_from_h2,
    socket_inode,
)

HOSTS = {"a.test": "198.18.2.2", "b.test": "198.18.2.2"}
RULES = [make_rule("a.test", "h2-parallel:2"), make_rule("b.test", "no-h3")]


def test_refusals() -> None:
    assert decide("a.test:443", authorized=False, hosts=HOSTS, rules=RULES) == Refuse(
        407, "proxy credential missing or wrong")
    d = decide("clients2.google.com:443", authorized=True, hosts=HOSTS, rules=RULES)
    assert isinstance(d, Refuse) and d.status == 403 and "not served" in d.reason
    for bad in ("a.test", "a.test:0", "a.test:99999", ":443", "a.test:x"):
        d = decide(bad, authorized=True, hosts=HOSTS, rules=RULES)
        assert isinstance(d, Refuse) and d.status == 400, bad


def test_tunnel_or_intercept() -> None:
    assert decide("a.test:443", authorized=True, hosts=HOSTS, rules=RULES) == Intercept(
        "198.18.2.2", 443, Arm("h2-parallel", 2))
    # no-h3 and hosts without a rule pass through unchanged
    assert decide("B.TEST:443", authorized=True, hosts=HOSTS, rules=RULES) == Tunnel(
        "198.18.2.2", 443)
    assert decide("b.test:443", authorized=True, hosts=HOSTS, rules=[]) == Tunnel(
        "198.18.2.2", 443)
    assert Intercept("x", 443, Arm("h1")).alpn == ["http/1.1"]
    assert Intercept("x", 443, Arm("h2")).alpn == ["h2", "http/1.1"]
    assert parse_authority("[::1]:8443") == ("::1", 8443)


def test_credentials() -> None:
    assert check_basic(basic_credential("s3cret"), "s3cret")
    assert not check_basic(basic_credential("s3cret"), "other")
    assert not check_basic(None, "s3cret")
    assert not check_basic(b"Basic " + b"cHJvdG9sZW5zOg==", "s3cret")
    env = b"HOME=/root\0PROTOLENS_PROXY_TOKEN=abc\0PATH=/bin\0"
    assert environ_has_token(env, "abc")
    assert not environ_has_token(env, "ab")
    assert not environ_has_token(b"PROTOLENS_PROXY_TOKEN=abcd\0", "abc")
    assert is_loopback("127.0.0.1") and is_loopback("::1")
    assert not is_loopback("198.18.1.2") and not is_loopback("garbage")


PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1
   1: 0100007F:A456 0100007F:9C41 01 00000000:00000000 00:00000000 00000000     0        0 222 1
   2: 0100007F:9C41 0100007F:A456 01 00000000:00000000 00:00000000 00000000     0        0 333 1
"""


def test_socket_inode_from_proc_net_tcp() -> None:
    # the browser's end 127.0.0.1:42070 -> proxy 127.0.0.1:40001
    assert socket_inode(PROC_NET_TCP, ("127.0.0.1", 42070), ("127.0.0.1", 40001)) == 222
    assert socket_inode(PROC_NET_TCP, ("127.0.0.1", 40001), ("127.0.0.1", 42070)) == 333
    assert socket_inode(PROC_NET_TCP, ("127.0.0.1", 1), ("127.0.0.1", 40001)) is None


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_round_robin_splits_evenly(n: int) -> None:
    rr = RoundRobin(n)
    picks = [rr.assign() for _ in range(10 * n + 1)]
    assert picks[:n] == list(range(n))
    counts = [picks.count(i) for i in range(n)]
    assert max(counts) - min(counts) <= 1


def test_round_robin_needs_a_connection() -> None:
    with pytest.raises(ValueError, match="at least one"):
        RoundRobin(0)


def test_next_chunk_bounds() -> None:
    assert next_chunk(100_000, 65_535, 1_000_000, 16_384) == 16_384
    assert next_chunk(100_000, 1_000, 1_000_000, 16_384) == 1_000
    assert next_chunk(100_000, 65_535, 10, 16_384) == 10
    assert next_chunk(5, 65_535, 65_535, 16_384) == 5
    assert next_chunk(100, 0, 65_535, 16_384) == 0
    assert next_chunk(100, -5, 65_535, 16_384) == 0


def _pair(client_window: int) -> tuple[h2.connection.H2Connection, h2.connection.H2Connection]:
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    client.local_settings = h2.settings.Settings(client=True, initial_values={
        h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: client_window})
    client.initiate_connection()
    server.initiate_connection()
    for _ in range(3):
        server.receive_data(client.data_to_send())
        client.receive_data(server.data_to_send())
    return client, server


def _send_what_fits(server: h2.connection.H2Connection, sid: int, data: bytes) -> int:
    sent = 0
    while n := next_chunk(len(data) - sent, server.local_flow_control_window(sid),
                          server.outbound_flow_control_window, server.max_outbound_frame_size):
        server.send_data(sid, data[sent:sent + n])
        sent += n
    return sent


def test_flow_control_respected_with_real_h2_state_machines() -> None:
    """The proxy's send loop stops at the browser's window and resumes only after the browser
    acknowledges data (WINDOW_UPDATE), as BrowserH2.send does."""
    client, server = _pair(client_window=20_000)
    sid = client.get_next_available_stream_id()
    client.send_headers(sid, [(":method", "GET"), (":scheme", "https"),
                              (":authority", "a.test"), (":path", "/")], end_stream=True)
    server.receive_data(client.data_to_send())
    server.send_headers(sid, [(":status", "200")])
    body = bytes(50_000)
    first = _send_what_fits(server, sid, body)
    assert first == 20_000
    assert _send_what_fits(server, sid, body[first:]) == 0  # window closed: nothing more
    events = client.receive_data(server.data_to_send())
    got = sum(e.flow_controlled_length for e in events if isinstance(e, h2.events.DataReceived))
    assert got == 20_000
    client.acknowledge_received_data(got, sid)
    server.receive_data(client.data_to_send())
    assert _send_what_fits(server, sid, body[first:]) == 20_000


def test_header_translation() -> None:
    req = request_from_h2([(b":method", b"GET"), (b":scheme", b"https"),
                           (b":authority", b"a.test"), (b":path", b"/x?y"),
                           (b"accept", b"*/*"), (b"connection", b"keep-alive"),
                           (b"te", b"trailers")])
    assert request_to_h1(req) == (b"GET", b"/x?y", [(b"host", b"a.test"), (b"accept", b"*/*")])
    back = request_from_h1(b"GET", b"/x?y", [(b"host", b"a.test"), (b"accept", b"*/*"),
                                             (b"proxy-connection", b"x")], b"fallback")
    assert request_to_h2(back) == [(b":method", b"GET"), (b":scheme", b"https"),
                                   (b":authority", b"a.test"), (b":path", b"/x?y"),
                                   (b"accept", b"*/*")]
    resp = response_from_h2([(b":status", b"404"), (b"content-length", b"3"),
                             (b"transfer-encoding", b"chunked")])
    assert resp.status == 404 and resp.headers == ((b"content-length", b"3"),)


def test_lab_rules_and_mechanisms() -> None:
    assert arm_rules(Arm("h2-parallel", 2), ["a.test", "b.test", "a.test"], []) == [
        {"domain": "a.test", "arm": "h2-parallel:2"}, {"domain": "b.test", "arm": "h2-parallel:2"}]
    assert arm_rules(Arm("proxy-h3"), ["a.test"], []) == [{"domain": "a.test", "arm": "h3"}]
    mix = [{"domain": "b.test", "arm": "h1"}]
    assert arm_rules(Arm("policy"), ["a.test", "b.test"], mix) == mix
    got = applied(Arm("policy"), ["a.test", "b.test"], mix)
    assert (got["b.test"].arm, got["b.test"].mechanism) == ("h1", "proxy")
    assert (got["a.test"].rule, got["a.test"].mechanism) == (None, "proxy-tunnel")
    assert applied(Arm("h2"), ["a.test"], [])["a.test"].mechanism == "chromium-flags"


def test_split_by_navigation() -> None:
    conns = [{"id": 1, "first_epoch_ms": 1000.0}, {"id": 2, "first_epoch_ms": 5000.0},
             {"id": 3, "first_epoch_ms": None}]
    out = split_by_navigation(conns, [("cold", 900.0), ("warm", 4000.0)])
    assert [c["id"] for c in out["cold"]] == [1, 3]
    assert [c["id"] for c in out["warm"]] == [2]
    assert split_by_navigation(conns, []) == {}
