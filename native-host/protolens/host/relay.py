"""The host's policy adapter: rules from the store, and the local CONNECT relay
(``protolens.proxy.relay``) started on loopback in a daemon thread of the host process the first
time a ``no-h3`` rule needs it, with a per-run random credential the extension receives in the
``policies`` message (docs/POLICY.md, "The no-h3 relay").

``PROTOLENS_RELAY_HOSTS`` (``a.test=127.0.0.1,b.test=127.0.0.1``), for the lab and tests only:
the relay resolves those names to those addresses and refuses every other host; unset, it
resolves names normally (the user's own traffic).

The relay's code (``protolens.proxy.relay``: asyncio, ssl, h11, h2) is imported when a relay is
first needed, not at the host's start: 30-55 ms of a host start of 160-225 ms measured with
``python -X importtime`` here (2026-11-27), and a lab browser's start waits for its host's
hello (lab/runner.py).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from protolens.messaging.policies import PolicySnapshot, needs_relay
from protolens.policy.rules import PolicyError, Rule, match
from protolens.store import DatabaseError, StoreError, open_ro
from protolens.store import policy as policystore

if TYPE_CHECKING:
    from protolens.proxy.relay import Relay

RELAY_HOSTS_ENV = "PROTOLENS_RELAY_HOSTS"
START_TIMEOUT_S = 5.0

log = logging.getLogger("protolens.host")


def parse_relay_hosts(text: str | None) -> dict[str, str] | None:
    """``name=address,name=address`` -> mapping; None when unset or empty."""
    if not text:
        return None
    out: dict[str, str] = {}
    for item in text.split(","):
        name, sep, address = item.strip().partition("=")
        if not sep or not name or not address:
            raise ValueError(f"{RELAY_HOSTS_ENV}: expected name=address, got {item!r}")
        out[name.strip().lower()] = address.strip()
    return out


def read_rules(db: Path) -> list[Rule]:
    """Stored rules, read-only (never creates the store); none without a store or table."""
    if not db.exists():
        return []
    conn = open_ro(db)
    try:
        return policystore.rules(conn) if policystore.has_table(conn) else []
    finally:
        conn.close()


class RelayThread:
    """One relay per host process, on an ephemeral loopback port, serving until the process ends."""

    def __init__(self, hosts: Mapping[str, str] | None, allowed: Callable[[str], bool]) -> None:
        from protolens.proxy.relay import Relay  # the first relay: see the module docstring
        self.token = secrets.token_urlsafe(24)
        self.relay: Relay = Relay(self.token, hosts=hosts, allowed=allowed)
        self.port: int | None = None
        self._ready = threading.Event()
        self._error: str | None = None

    def start(self) -> int:
        """Start the thread (once) and return the port; ``OSError`` if it could not listen."""
        if self.port is not None:
            return self.port
        threading.Thread(target=self._run, name="protolens-relay", daemon=True).start()
        if not self._ready.wait(START_TIMEOUT_S) or self.port is None:
            raise OSError(self._error or "relay did not start in time")
        return self.port

    def _ready_cb(self, port: int) -> None:
        self.port = port
        self._ready.set()

    def _run(self) -> None:
        import asyncio

        from protolens.proxy.relay import serve
        try:
            asyncio.run(serve(self.relay, 0, ready=self._ready_cb))
        except Exception as exc:  # reported to the caller of start(); the host keeps serving
            self._error = f"relay: {type(exc).__name__}: {exc}"
            log.error("%s", self._error)
            self._ready.set()


class StorePolicies:
    """``PolicySource`` for the host: reads the rules on every ask (the CLI may have changed them)
    and starts the relay on the first ask that has a ``no-h3`` rule."""

    def __init__(self, db: Path, env: Mapping[str, str]) -> None:
        self.db = db
        self._env = env
        self._relay: RelayThread | None = None
        self._experiment = False

    def relayed(self, host: str) -> bool:
        """Whether the relay may carry ``host``: a stored ``no-h3`` rule
        routes it there. Once the extension asked for the relay for its A/B experiment
        (``want_relay``), whose enrolled domains only the extension knows, any host name may
        pass; the port and address checks of ``proxy/targets.py`` still apply."""
        if self._experiment:
            return True
        try:
            rule = match(read_rules(self.db), host)
        except (DatabaseError, StoreError, PolicyError):
            return False
        return rule is not None and rule.arm.name == "no-h3"

    def snapshot(self, want_relay: bool = False) -> PolicySnapshot:
        try:
            rules = read_rules(self.db)
        except (DatabaseError, StoreError, PolicyError) as exc:
            return PolicySnapshot([], None, None, f"store: {exc}")
        self._experiment = self._experiment or want_relay
        if not (want_relay or needs_relay(rules) or self._relay is not None):
            return PolicySnapshot(rules, None, None)
        try:
            if self._relay is None:
                self._relay = RelayThread(parse_relay_hosts(self._env.get(RELAY_HOSTS_ENV)),
                                          self.relayed)
            port = self._relay.start()
        except (OSError, ValueError) as exc:
            self._relay = None
            return PolicySnapshot(rules, None, None, str(exc))
        return PolicySnapshot(rules, port, self._relay.token)
