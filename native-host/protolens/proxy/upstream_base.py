"""Types shared by the proxy's upstream connections: targets, responses, errors."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from protolens.proxy.core import (
    ResponseHead,
)

CHROMIUM_STREAM_WINDOW = 6 * 1024 * 1024
CHROMIUM_SESSION_WINDOW = 15 * 1024 * 1024
"""Chromium's own HTTP/2 receive windows (net/spdy: kDefaultInitialWindowSize 6 MB per stream,
15 MB per session), so the server sees the windows it would see from the browser directly."""

Item = tuple[bytes, int] | None | BaseException


def now_ms() -> float:
    return time.time() * 1000


class UpstreamError(Exception):
    """An upstream connection failed; the stream gets a 502 or a reset."""


@dataclass
class Response:
    head: ResponseHead
    chunks: asyncio.Queue[Item]
    """(data, flow-controlled length), then None at the end, or an exception."""
    consumed: Callable[[int], None] = lambda n: None


@dataclass
class Target:
    host: str
    ip: str
    port: int
    ssl: ssl.SSLContext
    """Client context verifying the server (the testbed CA)."""
    quic_ca: str | None = None


