"""The ``policies`` message, the relay the host starts for it, and the record's optional
``policies`` / ``experiment`` fields down to the store (issue 6, items 3 and 4)."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from protolens.host.relay import StorePolicies, parse_relay_hosts
from protolens.messaging.dispatch import Dispatcher
from protolens.messaging.policies import PolicySnapshot, policies_reply
from protolens.policy.rules import make_rule
from protolens.record import RecordError, parse_record
from protolens.store import SqliteSink, open_rw
from protolens.store import policy as policystore
from scripts.devkit.navrecord_builder import make_record
from tests.host.test_host_process import Host, frame


class NoSink:
    def ingest(self, record: Any, context: Any, now_ms: float) -> bool:
        raise AssertionError("no record expected")


def store_with(tmp: Path, *rules: tuple[str, str, float | None]) -> Path:
    db = tmp / "p.db"
    conn = open_rw(db, now_ms=0)
    for domain, arm, latency in rules:
        policystore.add_rule(conn, make_rule(domain, arm, latency), now_ms=0)
    conn.close()
    return db


def test_reply_shape() -> None:
    snap = PolicySnapshot([make_rule("a.test", "no-h3", 300.0)], 4242, "tok")
    assert policies_reply(snap) == {
        "type": "policies", "schema": 1, "error": None,
        "rules": [{"domain": "a.test", "kind": "registrable", "arm": "no-h3",
                   "latency_ms": 300.0, "throughput_kbps": None}],
        "relay": {"host": "127.0.0.1", "port": 4242, "username": "protolens", "password": "tok"}}
    assert policies_reply(PolicySnapshot([], None, None))["relay"] is None


def test_hello_is_followed_by_policies_and_policies_is_answered(tmp_path: Path) -> None:
    db = store_with(tmp_path, ("b.test", "default", 300.0))
    d = Dispatcher(NoSink(), policies=StorePolicies(db, {}))
    hello, pol = d.handle_all(json.dumps({"type": "hello", "schema": 1}).encode(), 0)
    assert hello["type"] == "hello" and pol["type"] == "policies"
    assert [r["domain"] for r in pol["rules"]] == ["b.test"]
    assert pol["relay"] is None  # no no-h3 rule: no relay started
    (asked,) = d.handle_all(b'{"type":"policies","schema":1,"msg_id":"p1"}', 0)
    assert asked["type"] == "policies" and asked["msg_id"] == "p1"
    (pong,) = d.handle_all(b'{"type":"ping","schema":1}', 0)
    assert pong["type"] == "pong"
    (bad,) = d.handle_all(b'{"type":"policies","schema":1,"want_relay":"yes"}', 0)
    assert bad["type"] == "error" and "want_relay" in bad["error"]
    (wanted,) = d.handle_all(b'{"type":"policies","schema":1,"want_relay":true}', 0)
    assert wanted["relay"]["port"] > 0  # an experiment needs the relay without a no-h3 rule
    (again,) = d.handle_all(b'{"type":"policies","schema":1}', 0)
    assert again["relay"] == wanted["relay"]  # once started, it stays announced


def test_without_policy_source_policies_is_an_error() -> None:
    (err,) = Dispatcher(NoSink()).handle_all(b'{"type":"policies","schema":1}', 0)
    assert err["type"] == "error" and "policies" in err["error"]


def test_no_store_no_rules_and_no_file_created(tmp_path: Path) -> None:
    snap = StorePolicies(tmp_path / "none.db", {}).snapshot()
    assert (list(snap.rules), snap.relay_port) == ([], None)
    assert not (tmp_path / "none.db").exists()


def test_relay_hosts_env() -> None:
    assert parse_relay_hosts("a.test=127.0.0.1, b.test=::1") == {"a.test": "127.0.0.1",
                                                                 "b.test": "::1"}
    assert parse_relay_hosts("") is None
    with pytest.raises(ValueError, match="name=address"):
        parse_relay_hosts("a.test")


def _connect(port: int, target: str, auth: str | None) -> tuple[bytes, socket.socket]:
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


def test_no_h3_rule_starts_the_relay_with_a_credential(tmp_path: Path) -> None:
    echo = socket.socket()
    echo.bind(("127.0.0.1", 0))
    echo.listen()

    def serve_echo() -> None:
        c, _ = echo.accept()
        c.sendall(c.recv(100).upper())
        c.close()

    threading.Thread(target=serve_echo, daemon=True).start()
    db = store_with(tmp_path, ("a.test", "no-h3", None))
    src = StorePolicies(db, {"PROTOLENS_RELAY_HOSTS": "a.test=127.0.0.1"})
    snap = src.snapshot()
    assert snap.relay_port and snap.credential and snap.error is None
    assert src.snapshot().relay_port == snap.relay_port  # one relay per process
    target = f"a.test:{echo.getsockname()[1]}"

    head, s = _connect(snap.relay_port, target, None)
    s.close()
    assert head.startswith(b"HTTP/1.1 407") and b'basic realm="protolens"' in head.lower()
    head, s = _connect(snap.relay_port, target, "protolens:wrong")
    s.close()
    assert head.startswith(b"HTTP/1.1 407")
    head, s = _connect(snap.relay_port, f"c.test:{echo.getsockname()[1]}",
                       f"protolens:{snap.credential}")
    s.close()
    assert head.startswith(b"HTTP/1.1 403")  # not in PROTOLENS_RELAY_HOSTS: refused
    head, s = _connect(snap.relay_port, target, f"protolens:{snap.credential}")
    assert head.startswith(b"HTTP/1.1 200")
    s.sendall(b"hello")
    assert s.recv(100) == b"HELLO"
    s.close()


_RELAY_CODE = ("protolens.proxy.relay", "asyncio", "h2", "h11", "ssl")


def _imported_after_policies(db: Path) -> dict[str, bool]:
    """In a fresh interpreter: the host's modules as ``python -m protolens.host`` imports them,
    then a policies answer from ``db``; which of the relay's modules were imported."""
    code = "\n".join((
        "import json, sys",
        "from pathlib import Path",
        "import protolens.host.stdio",
        "from protolens.host.relay import StorePolicies",
        "snap = StorePolicies(Path(sys.argv[1]), {}).snapshot()",
        "seen = {m: m in sys.modules for m in sys.argv[2:]}",
        "print(json.dumps({'relay': snap.relay_port is not None, **seen}))"))
    out = subprocess.run([sys.executable, "-c", code, str(db), *_RELAY_CODE],
                         capture_output=True, text=True, check=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    result: dict[str, bool] = json.loads(out.stdout)
    return result


def test_the_relay_code_is_imported_only_when_a_relay_starts(tmp_path: Path) -> None:
    """A lab browser's start waits for its host's hello (lab/runner.py): the host does not
    import the relay's code (asyncio, ssl, h11, h2) until a no-h3 rule needs a relay."""
    plain = _imported_after_policies(store_with(tmp_path, ("a.test", "h2", None)))
    assert plain == {"relay": False, **{m: False for m in _RELAY_CODE}}
    other = tmp_path / "relayed"
    other.mkdir()
    relayed = _imported_after_policies(store_with(other, ("a.test", "no-h3", None)))
    assert relayed == {"relay": True, **{m: True for m in _RELAY_CODE}}


def test_host_process_sends_policies_after_hello(tmp_path: Path) -> None:
    host = Host(tmp_path, {"PROTOLENS_RELAY_HOSTS": "a.test=127.0.0.1"})
    host.db.parent.mkdir(parents=True)
    store_with(host.db.parent, ("a.test", "no-h3", None))
    (host.db.parent / "p.db").rename(host.db)
    host.send(frame({"type": "hello", "schema": 1}))
    assert host.reply()["type"] == "hello"
    pol = host.reply()
    assert pol["type"] == "policies" and pol["rules"][0]["arm"] == "no-h3"
    port = pol["relay"]["port"]
    head, s = _connect(port, "a.test:9", f"protolens:{pol['relay']['password']}")
    s.close()
    assert head.startswith(b"HTTP/1.1 502")  # the relay runs inside the host; port 9 is closed
    assert host.close()[0] == 0


def with_policies(rec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**rec, **extra}


POLICIES = [{"host": "a.test", "rule": "a.test", "arm": "no-h3", "mechanism": "relay",
             "rule_ids": []},
            {"host": "b.test", "rule": "b.test", "arm": "default",
             "mechanism": "none+cdp-throttling", "rule_ids": ["7.1"]}]


def test_record_policies_and_experiment_validate_and_store(tmp_path: Path) -> None:
    rec = with_policies(make_record(6, source="experiment"), policies=POLICIES,
                        experiment={"name": "everyday", "arm": "no-h3"})
    parsed = parse_record(rec)
    assert parsed.policies[1].rule_ids == ("7.1",) and parsed.experiment is not None
    conn = open_rw(tmp_path / "s.db", now_ms=0)
    assert SqliteSink(conn).ingest(parsed, {}, 0)
    rows = [tuple(r) for r in conn.execute(
        "SELECT host, rule, arm, mechanism, rule_ids FROM navigation_policies ORDER BY host")]
    assert rows == [("a.test", "a.test", "no-h3", "relay", "[]"),
                    ("b.test", "b.test", "default", "none+cdp-throttling", '["7.1"]')]
    nav = conn.execute("SELECT source, arm, context FROM navigations").fetchone()
    assert tuple(nav)[:2] == ("experiment", "no-h3")
    assert json.loads(nav[2])["experiment"] == "everyday"
    # protolens compare --source experiment reads navigation_summary's source and arm
    assert tuple(conn.execute("SELECT source, arm FROM navigation_summary").fetchone()) == (
        "experiment", "no-h3")


@pytest.mark.parametrize(("extra", "message"), [
    ({"policies": [{"host": "a.test", "arm": "x", "mechanism": "relay"}]}, "policies[0].rule"),
    ({"policies": [{**POLICIES[0], "rule_ids": [3]}]}, "policies[0].rule_ids[0]"),
    ({"policies": [POLICIES[0], POLICIES[0]]}, "policies[1].host: duplicate"),
    ({"policies": {}}, "policies: expected array"),
    ({"experiment": {"name": "e", "arm": "no-h3"}}, 'only for source "experiment"'),
])
def test_bad_optional_fields_are_named(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_record(with_policies(make_record(3), **extra))


def test_records_without_the_new_fields_still_parse() -> None:
    parsed = parse_record(make_record(3))
    assert parsed.policies == () and parsed.experiment is None
