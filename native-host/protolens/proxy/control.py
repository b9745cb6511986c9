"""Starting the lab proxy and talking to it (adapter for the lab runner and tests).

The proxy runs as its own process, inside the testbed's client namespace when there is one (so
its upstream connections cross the shaper and show in caddy's log and the shaper's flows); the
runner reaches it over a Unix socket (0600) in a private directory: ``configure`` per load (the
load's rules; resets the report and drops upstream connections), ``report`` after it.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.certs import ProxyCA, ensure_ca
from protolens.paths import data_home
from protolens.proxy.core import TOKEN_ENV


class ProxyError(Exception):
    """The proxy could not start or answer; one line."""


def ca_dir(env: Mapping[str, str]) -> Path:
    return data_home(env) / "proxy"


@dataclass
class ProxyProcess:
    proc: subprocess.Popen[bytes]
    port: int
    token: str
    control: Path
    ca: ProxyCA
    workdir: Path

    @property
    def env_prefix(self) -> list[str]:
        """argv prefix that gives the lab browser the run's credential (``core.TOKEN_ENV``)."""
        return ["env", f"{TOKEN_ENV}={self.token}"]

    def flags(self) -> list[str]:
        """Chromium flags for a load through the proxy. QUIC off: Chromium never uses QUIC
        through an HTTP proxy anyway (docs/ARCHITECTURE.md), and h3 is the proxy's upstream job."""
        return ["--disable-quic", f"--proxy-server=http://127.0.0.1:{self.port}",
                "--proxy-bypass-list=<-loopback>"]

    def call(self, msg: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            try:
                s.connect(str(self.control))
                s.sendall(json.dumps(msg).encode() + b"\n")
                buf = b""
                while not buf.endswith(b"\n"):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
            except OSError as exc:
                raise ProxyError(f"lab proxy not answering on {self.control}: {exc}") from None
        reply: dict[str, Any] = json.loads(buf or b"{}")
        if not reply.get("ok"):
            raise ProxyError(f"lab proxy: {reply.get('error', 'no reply')}")
        return reply

    def configure(self, rules: Sequence[Mapping[str, Any]], every_host: str | None = None
                  ) -> None:
        """This load's rules, and the arm for hosts no rule names (``every_host``)."""
        self.call({"cmd": "configure", "rules": list(rules), "every_host": every_host})

    def report(self, reset: bool = False) -> dict[str, Any]:
        return self.call({"cmd": "report", "reset": reset})

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start(*, hosts: Mapping[str, str], upstream_ca: str | None, prefix: Sequence[str] = (),
          env: Mapping[str, str] | None = None, rules: Sequence[Mapping[str, Any]] = (),
          check_process: bool = True, listen: str = "127.0.0.1",
          resolve: bool = False) -> ProxyProcess:
    """Start the proxy (under ``prefix``, e.g. ``ip netns exec <client ns>``); wait until it
    listens. ``resolve``: also serve hosts not in ``hosts``, resolved where it runs (real
    sites)."""
    env = dict(os.environ if env is None else env)
    ca = ensure_ca(ca_dir(env), datetime.datetime.now(datetime.UTC))
    workdir = Path(tempfile.mkdtemp(prefix="protolens-proxy-"))
    os.chmod(workdir, 0o700)
    token = secrets.token_urlsafe(24)
    control = workdir / "control.sock"
    cfg = {"token": token, "hosts": dict(hosts), "ca_dir": str(ca.directory),
           "upstream_ca": upstream_ca, "control": str(control), "port": 0,
           "rules": list(rules), "check_process": check_process, "listen": listen,
           "workdir": str(workdir), "resolve": resolve}
    cfg_path = workdir / "config.json"
    fd = os.open(cfg_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(cfg, f)
    log = (workdir / "proxy.log").open("wb")
    proc = subprocess.Popen([*prefix, sys.executable, "-m", "protolens.proxy", str(cfg_path)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                            env=env, start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        port = int(json.loads(line)["port"])
    except (ValueError, KeyError):
        proc.kill()
        proc.wait()
        tail = (workdir / "proxy.log").read_text(errors="replace")[-300:]
        raise ProxyError(f"lab proxy did not start: {tail.strip() or 'no output'}") from None
    return ProxyProcess(proc, port, token, control, ca, workdir)
