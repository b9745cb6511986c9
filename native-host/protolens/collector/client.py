"""The volunteer's side of an upload (adapter): POST one bundle to a collector over HTTPS, with
exponential back-off and jitter on network errors, 5xx and 429 (honouring ``Retry-After``, RFC
9110 section 10.2.3); any other refusal is final. The same bytes are sent on every try, so a
retry after a lost answer is recognised by the collector as the same bundle (same checksum).
"""

from __future__ import annotations

import random
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from protolens.collector.wire import CONTENT_TYPE

UPLOAD_PATH = "/v1/bundles"


class UploadError(Exception):
    """The collector refused the bundle, or could not be reached after every try."""


@dataclass(frozen=True)
class Backoff:
    tries: int = 6
    first_s: float = 0.5
    max_s: float = 30.0

    def delay(self, attempt: int, rnd: float) -> float:
        """Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015)."""
        return rnd * min(self.max_s, self.first_s * 2 ** attempt)


def ssl_context(ca_cert: Path | None) -> ssl.SSLContext:
    """The system's trust store, or only ``ca_cert`` when given (a private collector's CA)."""
    if ca_cert is None:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=str(ca_cert))


def upload(url: str, token: str, body: bytes, *, ca_cert: Path | None = None,
           backoff: Backoff = Backoff(), sleep: Callable[[float], None],
           timeout_s: float = 60.0) -> dict[str, Any]:
    """Upload ``body``; the collector's receipt. Raises ``UploadError`` (never with the token
    in its message)."""
    target = url.rstrip("/") + UPLOAD_PATH
    headers = {"Authorization": f"Bearer {token}", "Content-Type": CONTENT_TYPE}
    last = ""
    with httpx.Client(verify=ssl_context(ca_cert), timeout=timeout_s) as client:
        for attempt in range(backoff.tries):
            wait = None
            try:
                resp = client.post(target, content=body, headers=headers)
            except httpx.TransportError as exc:
                last = f"cannot reach {url} ({type(exc).__name__}: {exc})"
            else:
                if resp.status_code in (200, 201):
                    receipt: dict[str, Any] = resp.json()
                    return receipt
                message = _message(resp)
                if resp.status_code != 429 and resp.status_code < 500:
                    raise UploadError(f"{url} refused the bundle ({resp.status_code}): {message}")
                last = f"{url} answered {resp.status_code}: {message}"
                retry_after = resp.headers.get("retry-after", "")
                wait = float(retry_after) if retry_after.isdigit() else None
            if attempt + 1 < backoff.tries:
                delay = backoff.delay(attempt, random.random())
                sleep(min(backoff.max_s, max(delay, wait or 0.0)))
    raise UploadError(f"gave up after {backoff.tries} tries: {last}")


def _message(resp: httpx.Response) -> str:
    try:
        return str(resp.json().get("error", resp.text))
    except ValueError:
        return resp.text[:200]
