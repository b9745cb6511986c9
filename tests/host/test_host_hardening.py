"""Issue 15 items 1, 2 and 11 through the real host process (``python -m protolens.host`` over
real pipes, a real SQLite file): text the host cannot encode, records that can never be stored,
and frames built to exhaust memory. Each reply is checked, then that the host keeps serving."""

from __future__ import annotations

import base64
import sqlite3
import sys
from pathlib import Path
from typing import Any

from test_host_process import Host, frame

from protolens.messaging.framing import encode_frame
from scripts.devkit.navrecord_builder import make_record

SURROGATE = "\ud800"  # json.dumps writes it as the escape \ud800: valid JSON, not valid text


def stored(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT id FROM navigations")}


def record_msg(rec: dict[str, Any], msg_id: str) -> bytes:
    return frame({"type": "record", "schema": 1, "msg_id": msg_id, "record": rec})


def ping_ok(host: Host) -> None:
    host.send(frame({"type": "ping", "schema": 1}))
    assert host.reply() == {"type": "pong", "schema": 1}


def test_lone_surrogate_msg_id_is_answered_and_nothing_stored(tmp_path: Path) -> None:
    host = Host(tmp_path)
    rec = make_record(2)
    host.send(record_msg(rec, SURROGATE))
    reply = host.reply()
    assert reply["type"] == "error" and reply["msg_id"] is None and reply["retry"] is False
    assert reply["error"].startswith("msg_id: expected a string")
    ping_ok(host)
    code, _, err = host.close()
    assert code == 0 and b"Traceback" not in err
    assert stored(host.db) == set()  # refused before the store: never stored-but-unacked


def test_lone_surrogate_in_a_field_or_echoed_value_is_refused_for_good(tmp_path: Path) -> None:
    host = Host(tmp_path)
    for path, n in ((("requests", 1, "family"), 1), (("page", "url"), 2), (("context", "x"), 3)):
        rec = make_record(2, seed=n)
        target: Any = rec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = "bad" + SURROGATE  # family: a bad enum value the error would echo
        host.send(record_msg(rec, f"m{n}"))
        reply = host.reply()
        assert reply["type"] == "error" and reply["msg_id"] == f"m{n}", reply
        assert reply["retry"] is False and "surrogate" in reply["error"]
    good = make_record(2, seed=9)
    host.send(record_msg(good, "g"))
    assert host.reply()["type"] == "ack"
    code, _, err = host.close()
    assert code == 0 and b"Traceback" not in err
    assert stored(host.db) == {good["id"]}


class Outbox:
    """The extension's outbox rules (src/outbox/outbox.ts): every item is resent on each
    connection, oldest first; an ack or an error with retry false removes it."""

    def __init__(self) -> None:
        self.items: list[tuple[str, bytes]] = []
        self.rejected = 0

    def deliver(self, host: Host) -> None:
        for _, data in self.items:
            host.send(data)
        replies = [host.reply() for _ in self.items]
        for reply in replies:
            if reply["type"] == "ack" or (reply["type"] == "error" and not reply["retry"]):
                before = len(self.items)
                self.items = [i for i in self.items if i[0] != reply["msg_id"]]
                self.rejected += reply["type"] == "error" and len(self.items) < before


def test_outbox_with_a_bad_oldest_message_still_delivers_the_rest(tmp_path: Path) -> None:
    """Issue 15 item 1: the bad message first, then 5 good records over 3 reconnects."""
    box = Outbox()
    bad_field = make_record(1, seed=100)
    bad_field["page"]["url"] = SURROGATE
    box.items.append(("bad-msg-id" + SURROGATE, record_msg(make_record(1, seed=99),
                                                           "bad-msg-id" + SURROGATE)))
    box.items.append(("bad-field", record_msg(bad_field, "bad-field")))
    good = [make_record(2, seed=i) for i in range(5)]
    batches = [good[:2], good[2:4], good[4:]]
    for batch in batches:  # each batch arrives while the host is away; then it reconnects
        box.items += [(r["id"], record_msg(r, r["id"])) for r in batch]
        host = Host(tmp_path)
        box.deliver(host)
        code, _, err = host.close()
        assert code == 0 and b"Traceback" not in err, err.decode(errors="replace")
    assert stored(host.db) == {r["id"] for r in good}
    assert box.rejected == 1  # the bad field: answered retry false with its msg_id, dropped
    # the bad msg_id cannot be echoed, so it stays queued, answered on every connection
    assert [i[0] for i in box.items] == ["bad-msg-id" + SURROGATE]


def test_integer_too_large_for_the_store_is_not_retried(tmp_path: Path) -> None:
    """Issue 15 item 2: 2^63 overflowed SQLite and was answered retry true forever."""
    host = Host(tmp_path)
    rec = make_record(2)
    rec["requests"][0]["encoded_bytes"] = 2**63
    host.send(record_msg(rec, "big"))
    reply = host.reply()
    assert reply["type"] == "error" and reply["msg_id"] == "big" and reply["retry"] is False
    ping_ok(host)
    host.close()
    assert stored(host.db) == set()


def test_locked_store_is_retried_and_stored_once_free(tmp_path: Path) -> None:
    host = Host(tmp_path)
    first = make_record(1, seed=1)
    host.send(record_msg(first, "1"))
    assert host.reply()["type"] == "ack"
    locker = sqlite3.connect(host.db, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    rec = make_record(1, seed=2)
    host.send(record_msg(rec, "2"))
    reply = host.reply()  # after the store's 5 s busy timeout
    assert reply["type"] == "error" and reply["retry"] is True and "locked" in reply["error"]
    locker.execute("ROLLBACK")
    locker.close()
    host.send(record_msg(rec, "2"))
    assert host.reply()["type"] == "ack"
    host.close()
    assert stored(host.db) == {first["id"], rec["id"]}


def test_frame_of_many_empty_objects_is_refused_cheaply(tmp_path: Path) -> None:
    """Issue 15 item 11: a 64 MiB ``[{},{},...]`` took 1.69 GB of host memory."""
    host = Host(tmp_path)
    n = (64 * 1024 * 1024 - 2) // 3
    body = b"[" + b"{}," * (n - 1) + b"{}]"
    host.send(encode_frame(body, limit=1 << 30))
    reply = host.reply()
    assert reply["type"] == "error" and "objects and arrays" in reply["error"]
    ping_ok(host)
    status = Path(f"/proc/{host.proc.pid}/status").read_text()
    peak_kb = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmHWM")))
    host.close()
    assert peak_kb < 400 * 1024, f"host peak RSS {peak_kb} kB"


def test_message_with_millions_of_values_is_refused_and_serving_continues(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.send(encode_frame(b'{"a":[' + b"0," * 3_000_000 + b"0]}", limit=1 << 30))
    reply = host.reply()
    assert reply["type"] == "error" and "values" in reply["error"]
    rec = make_record(1)
    host.send(record_msg(rec, "ok"))
    assert host.reply()["type"] == "ack"
    host.close()
    assert stored(host.db) == {rec["id"]}


def test_idle_relay_connections_leave_the_host_its_store(tmp_path: Path) -> None:
    """Issue 15 item 6 as found: 1,100 idle connections to the relay of a host limited to 1,024
    descriptors; the host must still open its store (first record) and relay an authenticated
    tunnel."""
    import socket

    echo = socket.socket()
    echo.bind(("127.0.0.1", 0))
    echo.listen()
    host = Host(tmp_path, {"PROTOLENS_RELAY_HOSTS": "a.test=127.0.0.1"},
                argv=["sh", "-c", f"ulimit -n 1024 && exec {sys.executable} -m protolens.host x"])
    host.send(frame({"type": "policies", "schema": 1, "want_relay": True}))
    relay = host.reply()["relay"]
    idle = []
    for _ in range(1100):
        try:
            idle.append(socket.create_connection(("127.0.0.1", relay["port"]), timeout=5))
        except OSError:
            break  # the kernel's accept queue is full: also no descriptor of the host's
    assert len(idle) >= 300
    rec = make_record(2)
    host.send(record_msg(rec, "r"))  # the store is opened now, on the first record
    assert host.reply()["type"] == "ack"
    tunnel = socket.create_connection(("127.0.0.1", relay["port"]), timeout=5)
    auth = base64.b64encode(f"protolens:{relay['password']}".encode()).decode()
    tunnel.sendall(f"CONNECT a.test:{echo.getsockname()[1]} HTTP/1.1\r\nHost: a.test\r\n"
                   f"Proxy-Authorization: Basic {auth}\r\n\r\n".encode())
    assert tunnel.recv(100).startswith(b"HTTP/1.1 200")
    for s in (*idle, tunnel, echo):
        s.close()
    assert host.close()[0] == 0
    assert stored(host.db) == {rec["id"]}
