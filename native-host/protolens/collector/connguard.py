"""Bounded connections (the policy is pure; ``GuardedH11Protocol`` is uvicorn's HTTP/1.1
protocol with it, an adapter).

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but a client that
sends a request's header one byte at a time is never closed (the slowloris attack: R. Hansen,
2009; CVE-2007-6750 is the same weakness in Apache httpd), and nothing caps the connections. So:

- a request's header must be complete within ``header_timeout_s`` of the connection (or of the
  previous response), however slowly its bytes trickle in;
- between requests a connection may stay idle ``idle_timeout_s``;
- at most ``max_connections`` connections: one more evicts the oldest that is not serving a
  request (waiting for a header, or idle), so a health check or an upload that sends its header
  at once always gets a place; only when every connection is serving a request is a new one
  closed. Uploads hold at most ``max_uploads`` of them (``app.py`` answers 503 past that): the
  rest stay for health checks and quick refusals.

The body's own timeouts are in ``app.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from uvicorn.protocols.http.h11_impl import H11Protocol

STATE_KEY = "protolens_connections"
"""Where the lifespan puts the ``ConnLimits`` in uvicorn's app state."""
BOARD_KEY = "protolens_board"
"""Where it puts the ``balance.Board`` (``--workers N``): each connection made or lost
publishes this process's count there."""


@dataclass(frozen=True)
class ConnLimits:
    max_connections: int = 1000
    header_timeout_s: float = 10.0
    idle_timeout_s: float = 5.0


class Conn(Protocol):
    pl_since: float
    pl_serving: bool
    pl_closing: bool

    def pl_drop(self) -> None: ...


def open_count(conns: Iterable[Conn]) -> int:
    return sum(not c.pl_closing for c in conns)


def victim(conns: Iterable[Conn], newcomer: Conn) -> Conn:
    """The connection to close for ``newcomer``: the oldest one not serving a request (and not
    closing already); the newcomer itself when every other one is serving."""
    idle = [c for c in conns if c is not newcomer and not c.pl_serving and not c.pl_closing]
    return min(idle, key=lambda c: c.pl_since) if idle else newcomer


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and the connection cap."""

    pl_since: float = 0.0
    pl_serving: bool = False
    pl_closing: bool = False
    _pl_timer: asyncio.TimerHandle | None = None

    def _pl_limits(self) -> ConnLimits:
        limits = self.app_state.get(STATE_KEY)
        return limits if isinstance(limits, ConnLimits) else ConnLimits()

    def _pl_arm(self, seconds: float) -> None:
        if self._pl_timer is not None:
            self._pl_timer.cancel()
        self.pl_since = self.loop.time()
        self._pl_timer = self.loop.call_later(seconds, self._pl_expire)

    def pl_drop(self) -> None:
        """Close at once: no TLS close_notify exchange with a peer that may never answer it
        (asyncio would wait ``ssl_shutdown_timeout``, 30 s, holding the descriptor)."""
        self.pl_closing = True
        self.transport.abort()

    def _pl_expire(self) -> None:
        self._pl_timer = None
        if not self.pl_serving and not self.transport.is_closing():
            self.pl_drop()

    def _pl_check_serving(self) -> None:
        serving = self.cycle is not None and not self.cycle.response_complete
        if serving and not self.pl_serving and self._pl_timer is not None:
            self._pl_timer.cancel()
            self._pl_timer = None
        self.pl_serving = serving

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limits = self._pl_limits()
        self._pl_arm(limits.header_timeout_s)
        if open_count(self.connections) > limits.max_connections:  # type: ignore[arg-type]
            victim(self.connections, self).pl_drop()  # type: ignore[arg-type]
        self._pl_publish()

    def _pl_publish(self) -> None:
        board = self.app_state.get(BOARD_KEY)
        if board is not None:
            board.publish(open_count(self.connections))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._pl_check_serving()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._pl_check_serving()
        if not self.pl_serving and not self.transport.is_closing():
            limits = self._pl_limits()
            self._pl_arm(limits.idle_timeout_s + limits.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._pl_timer is not None:
            self._pl_timer.cancel()
            self._pl_timer = None
        super().connection_lost(exc)
        self._pl_publish()
