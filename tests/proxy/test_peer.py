"""proxy/peer.py on real processes: the relay and the lab proxy accept a browser whose
environment carries the run's token, found from the connecting socket through /proc. A CI run
refused the lab browser (407, Chromium's ERR_INVALID_AUTH_CREDENTIALS) once: the scan gave up on a
process as soon as one of its descriptors closed while it was being read, which Chromium's network
service does all the time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from protolens.proxy.peer import owner_pids, process_has_token

# holds 40 descriptors and a listening socket above them, then opens and closes the lowest
# free slot (below the socket) as fast as it can: a busy process seen from outside
BUSY = """
import os, socket
held = [os.open('/dev/null', os.O_RDONLY) for _ in range(40)]
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
os.close(held[0])
print(os.fstat(s.fileno()).st_ino, flush=True)
while True:
    os.close(os.open('/dev/null', os.O_RDONLY))
"""

# connects to the port given and waits: the client end of a loopback connection
CLIENT = """
import socket, sys
c = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
print(c.getsockname()[1], flush=True)
sys.stdin.read()
"""


@pytest.fixture
def busy() -> Iterator[tuple[subprocess.Popen[str], int]]:
    child = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield child, int(child.stdout.readline())
    finally:
        child.kill()
        child.wait(5)


def test_a_busy_process_is_found_every_time(busy: tuple[subprocess.Popen[str], int]) -> None:
    child, inode = busy
    # the scan that stopped at the first closed descriptor missed it 26-40 times in 300 here
    missed = sum(child.pid not in owner_pids(inode) for _ in range(300))
    assert missed == 0


def _client(port: int, env: dict[str, str]) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen([sys.executable, "-c", CLIENT, str(port)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    return child, int(child.stdout.readline())


@pytest.mark.parametrize("carried, expected", [("run-token", True), ("other-token", False),
                                               (None, False)])
def test_the_token_is_read_from_the_connecting_process(carried: str | None,
                                                       expected: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PROTOLENS_PROXY_TOKEN"}
    if carried is not None:
        env["PROTOLENS_PROXY_TOKEN"] = carried
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        port = srv.getsockname()[1]
        child, client_port = _client(port, env)
        try:
            conn, peer = srv.accept()
            with conn:
                assert peer == ("127.0.0.1", client_port)
                assert process_has_token(peer, ("127.0.0.1", port), "run-token") is expected
        finally:
            child.kill()
            child.wait(5)
