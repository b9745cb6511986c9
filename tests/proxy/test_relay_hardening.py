"""Issue 15 items 5, 6 and 7: the no-h3 relays on loopback (the host's, started by a real
``policies`` ask, and ``protolens relay`` as a real process) refuse clients without the per-run
credential, bound idle and unauthenticated connections, and carry authenticated clients only to
ports 443/80 of policy-named hosts, never to loopback or themselves."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from protolens.host.relay import StorePolicies
from protolens.policy.rules import make_rule
from protolens.proxy.relay import Relay, serve
from protolens.proxy.targets import (
    Limits,
    check_target,
    is_host_name,
    refuse_address,
    usable_addresses,
)
from protolens.store import open_rw
from protolens.store import policy as policystore


def store_with(tmp: Path, *rules: tuple[str, str, float | None]) -> Path:
    db = tmp / "p.db"
    conn = open_rw(db, now_ms=0)
    for domain, arm, latency in rules:
        policystore.add_rule(conn, make_rule(domain, arm, latency), now_ms=0)
    conn.close()
    return db


def _connect(port: int, target: str, auth: str | None) -> tuple[bytes, socket.socket]:
    """Send ``CONNECT target`` (with Basic ``auth`` if given); the response head and the socket."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if auth is not None:
        head += f"Proxy-Authorization: Basic {base64.b64encode(auth.encode()).decode()}\r\n"
    s.sendall((head + "\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data, s


def echo_server() -> socket.socket:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def run() -> None:
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=c: (c.sendall(c.recv(100).upper()), c.close()),
                             daemon=True).start()

    threading.Thread(target=run, daemon=True).start()
    return srv


@pytest.fixture
def cli_relay(tmp_path: Path) -> Iterator[tuple[dict[str, object], socket.socket]]:
    echo = echo_server()
    env = {**os.environ, "PROTOLENS_DB": str(tmp_path / "none.db")}
    proc = subprocess.Popen([sys.executable, "-m", "protolens.cli", "relay", "--port", "0",
                             "--map", "a.test=127.0.0.1"], stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout is not None
    try:
        yield json.loads(proc.stdout.readline()), echo
    finally:
        proc.kill()
        proc.wait(10)
        echo.close()


def test_protolens_relay_requires_its_per_run_credential(cli_relay: tuple[dict[str, object],
                                                                          socket.socket]) -> None:
    ready, echo = cli_relay
    port, password = int(str(ready["port"])), str(ready["password"])
    assert ready["username"] == "protolens" and len(password) >= 24
    target = f"a.test:{echo.getsockname()[1]}"
    for auth in (None, "protolens:wrong", f"someone:{password}"):
        head, s = _connect(port, target, auth)
        s.close()
        assert head.startswith(b"HTTP/1.1 407"), (auth, head)
    head, s = _connect(port, target, f"protolens:{password}")
    assert head.startswith(b"HTTP/1.1 200")
    s.sendall(b"hi")
    assert s.recv(10) == b"HI"
    s.close()


def test_protolens_relay_accepts_a_client_process_carrying_the_token(
        cli_relay: tuple[dict[str, object], socket.socket]) -> None:
    """How a command-line browser authenticates (proxy/peer.py): the token in its environment."""
    ready, echo = cli_relay
    client = ("import socket,sys; s=socket.create_connection(('127.0.0.1', int(sys.argv[1])));"
              "s.sendall(f'CONNECT {sys.argv[2]} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'.encode());"
              "print(s.recv(100).split(b'\\r\\n')[0].decode())")
    args = [sys.executable, "-c", client, str(ready["port"]), f"a.test:{echo.getsockname()[1]}"]
    with_token = subprocess.run(args, env={**os.environ, "PROTOLENS_PROXY_TOKEN":
                                           str(ready["password"])},
                                capture_output=True, text=True, timeout=30)
    without = subprocess.run(args, env={**os.environ, "PROTOLENS_PROXY_TOKEN": "guess"},
                             capture_output=True, text=True, timeout=30)
    assert with_token.stdout.startswith("HTTP/1.1 200"), with_token.stderr
    assert without.stdout.startswith("HTTP/1.1 407")


def host_relay(tmp_path: Path) -> tuple[int, str]:
    db = store_with(tmp_path, ("a.test", "no-h3", None), ("b.test", "h2", None))
    snap = StorePolicies(db, {}).snapshot()  # everyday mode: no PROTOLENS_RELAY_HOSTS
    assert snap.relay_port is not None and snap.credential is not None
    return snap.relay_port, snap.credential


def test_host_relay_refuses_loopback_itself_other_ports_and_unnamed_hosts(tmp_path: Path
                                                                          ) -> None:
    port, password = host_relay(tmp_path)
    echo = echo_server()
    refused = ["127.0.0.1:443", "2130706433:443", "0x7f.1:443", "0177.0.0.1:443", "127.1:443",
               "[::1]:443", "[::ffff:127.0.0.1]:443", f"127.0.0.1:{port}",
               f"127.0.0.1:{echo.getsockname()[1]}", "localhost:443",
               "a.test:22", f"a.test:{port}", "b.test:443", "c.test:443"]
    for target in refused:
        head, s = _connect(port, target, f"protolens:{password}")
        s.close()
        assert head.startswith(b"HTTP/1.1 403"), (target, head)
    echo.close()


@pytest.mark.parametrize(("host", "port", "why"), [
    ("a.test", 443, None), ("www.a.test", 80, None), ("a.test", 8443, "port 8443"),
    ("2130706433", 443, "only host names"), ("0x7f.1", 443, "only host names"),
    ("::1", 443, "only host names"), ("c.test", 443, "no policy"),
])
def test_target_check(host: str, port: int, why: str | None) -> None:
    got = check_target(host, port, hosts=None, allowed=lambda h: h.endswith("a.test"))
    assert (why is None) == (not isinstance(got, str)) and (why is None or why in str(got))


def test_addresses_and_names() -> None:
    assert refuse_address("127.0.0.2") and refuse_address("::ffff:127.0.0.1")
    assert refuse_address("0.0.0.0") and refuse_address("169.254.1.1")
    assert refuse_address("10.0.0.1", ("127.0.0.1", 99), 99) is None  # a LAN site may be named
    assert refuse_address("93.184.216.34") is None
    assert is_host_name("a-b.example.com") and not is_host_name("127.1")
    assert not is_host_name("a..b") and not is_host_name("-a.com")


def test_a_policy_named_host_resolving_to_loopback_is_refused() -> None:
    """DNS rebinding: a name under a no-h3 domain may resolve to 127.0.0.1. The resolver is the
    one stand-in here (no DNS on this machine); the relay is real, on loopback."""
    answers = {"evil.a.test": ["127.0.0.1"], "v6.a.test": ["::1", "::ffff:127.0.0.1"]}

    async def resolve(host: str, port: int) -> list[str]:
        return answers.get(host, [])

    relay = Relay("tok", allowed=lambda h: h.endswith(".a.test"), resolve=resolve,
                  limits=Limits(handshake_s=1.0))
    port = run_relay(relay)
    for host in ("evil.a.test", "v6.a.test", "none.a.test"):
        head, s = _connect(port, f"{host}:443", "protolens:tok")
        s.close()
        assert head.startswith(b"HTTP/1.1 403"), (host, head)
    # of a mixed answer only the other addresses are kept (pure: no traffic leaves the machine)
    assert usable_addresses(["127.0.0.1", "203.0.113.9"], None, 443) == ["203.0.113.9"]
    assert "loopback" in str(usable_addresses(["127.0.0.1"], None, 443))


def test_many_idle_connections_cannot_starve_the_host_relay(tmp_path: Path) -> None:
    """1,100 idle connections used up the host's descriptors (issue 15 item 6): at most 256 are
    held; past that the oldest one still without a request gives way, so an authenticated
    CONNECT is still served."""
    port, password = host_relay(tmp_path)
    idle = []
    for _ in range(300):  # the cap is 256
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(3)
        idle.append(s)
    time.sleep(0.5)
    head, s = _connect(port, "c.test:443", f"protolens:{password}")
    s.close()
    assert head.startswith(b"HTTP/1.1 403")  # answered, though 300 idle came first
    closed = 0
    for s in idle[:45]:
        try:
            closed += s.recv(10) == b""
        except ConnectionResetError:
            closed += 1
        except TimeoutError:
            pass
    assert closed == 45  # the 44 oldest made way for the later idle ones, one for the CONNECT
    assert all(_open(s) for s in idle[45:])
    for s in idle:
        s.close()


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(10) == b""
    except ConnectionResetError:
        return True


def _open(s: socket.socket) -> bool:
    s.settimeout(0.01)
    try:
        return s.recv(10) != b""
    except TimeoutError:
        return True
    except OSError:
        return False


def run_relay(relay: Relay) -> int:
    got: list[int] = []
    ready = threading.Event()

    def on_ready(p: int) -> None:
        got.append(p)
        ready.set()

    threading.Thread(target=lambda: asyncio.run(serve(relay, 0, ready=on_ready)),
                     daemon=True).start()
    assert ready.wait(5)
    return got[0]


def test_unauthenticated_and_idle_connections_time_out() -> None:
    echo = socket.socket()
    echo.bind(("127.0.0.1", 0))
    echo.listen()
    relay = Relay("tok", hosts={"a.test": "127.0.0.1"},
                  limits=Limits(handshake_s=2.0, idle_s=0.7, max_connections=8))
    port = run_relay(relay)
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    for s in silent:
        s.sendall(b"CONNECT a.test:1 HTTP/1.1\r\n")  # never finishes its request
    time.sleep(0.1)
    start = time.monotonic()
    late = socket.create_connection(("127.0.0.1", port))  # over the cap of 8
    first = silent.pop(0)
    first.settimeout(2)
    assert _closed(first) and time.monotonic() - start < 1.5  # made way, before its 2 s
    for s in (*silent, late):
        s.settimeout(6)
        assert s.recv(10) == b""  # closed after the 2 s handshake limit
    assert relay.active == 0
    head, tunnel = _connect(port, f"a.test:{echo.getsockname()[1]}", "protolens:tok")
    assert head.startswith(b"HTTP/1.1 200")
    upstream, _ = echo.accept()
    tunnel.sendall(b"x")
    assert upstream.recv(1) == b"x"
    tunnel.settimeout(3)
    start = time.monotonic()
    assert tunnel.recv(10) == b""  # nothing moved for 0.7 s: the relay closed the tunnel
    assert 0.5 < time.monotonic() - start < 2.5
    for s in (*silent, first, late, tunnel, upstream, echo):
        s.close()


def test_lab_proxy_closes_silent_connections_and_caps_them(tmp_path: Path) -> None:
    """The lab's protocol-translating proxy (proxy/server.py) bounds its connections too."""
    import datetime

    from protolens.certs import ensure_ca
    from protolens.proxy.server import Config
    from protolens.proxy.server import serve as serve_proxy

    ca = ensure_ca(tmp_path / "ca", datetime.datetime.now(datetime.UTC))
    cfg = Config(token="tok", hosts={}, ca=ca, upstream_ca=None, check_process=False,
                 workdir=tmp_path / "leaves", limits=Limits(handshake_s=0.5, max_connections=4))
    got: list[int] = []
    ready = threading.Event()

    def on_ready(p: int) -> None:
        got.append(p)
        ready.set()

    threading.Thread(target=lambda: asyncio.run(serve_proxy(cfg, 0, tmp_path / "ctl",
                                                            ready=on_ready)),
                     daemon=True).start()
    assert ready.wait(5)
    silent = [socket.create_connection(("127.0.0.1", got[0])) for _ in range(4)]
    late = socket.create_connection(("127.0.0.1", got[0]))
    late.settimeout(2)
    assert late.recv(10) == b""  # over the cap of 4: closed at once
    for s in silent:
        s.settimeout(3)
        assert s.recv(10) == b""  # never sent a request: closed after 0.5 s
    head, s = _connect(got[0], "a.test:443", None)
    s.close()
    assert head.startswith(b"HTTP/1.1 407")  # still serving
    for s in (*silent, late):
        s.close()


def test_lab_mapping_serves_mapped_hosts_on_any_port_but_the_relay_itself() -> None:
    hosts = {"a.test": "127.0.0.1"}
    relay = ("127.0.0.1", 5000)
    got = check_target("a.test", 8443, hosts=hosts, allowed=lambda h: False, relay=relay)
    assert not isinstance(got, str) and got.mapped == "127.0.0.1"
    assert check_target("a.test", 5000, hosts=hosts, allowed=lambda h: True,
                        relay=relay) == "the relay itself"
    assert "not served" in str(check_target("b.test", 443, hosts=hosts, allowed=lambda h: True))
