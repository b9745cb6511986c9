"""The volunteer's side of an upload (adapter): POST one bundle to a collector over HTTPS, tagged
with the token's key (``tags.py``), with exponential back-off and jitter on network errors, 5xx
and 429 (honouring ``Retry-After``, RFC 9110 section 10.2.3); any other refusal is final, and so
is a certificate the client does not trust (trying again cannot change the certificate). The
same bytes are sent on every try, so a retry after a lost answer is recognised by the collector
as the same bundle (same checksum). A backlog's bundles can share one client (``open_client``):
one TLS connection, kept alive between them, instead of a handshake and a trust store per bundle.
"""

from __future__ import annotations

import io
import random
import ssl
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from protolens.collector.tags import HEADER, tag, tag_key
from protolens.collector.wire import CONTENT_TYPE
from protolens.share.bundle import MANIFEST

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


def manifest_of(body: bytes) -> bytes | None:
    """The manifest.json member of a bundle's bytes (None if there is none to read)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:") as tar:
            member = tar.extractfile(MANIFEST)
            return member.read() if member is not None else None
    except (tarfile.TarError, KeyError, OSError):
        return None


def _certificate_failure(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate verification error behind a transport error, if that is what it is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def open_client(ca_cert: Path | None = None, timeout_s: float = 60.0) -> httpx.Client:
    """An HTTPS client for one or more uploads (the caller closes it: ``with``)."""
    return httpx.Client(verify=ssl_context(ca_cert), timeout=timeout_s)


def upload(url: str, token: str, body: bytes, *, ca_cert: Path | None = None,
           backoff: Backoff = Backoff(), sleep: Callable[[float], None],
           timeout_s: float = 60.0, client: httpx.Client | None = None) -> dict[str, Any]:
    """Upload ``body``, tagged; the collector's receipt. Raises ``UploadError`` (never with the
    token in its message). ``client``: one from ``open_client`` to send it on (its trust store
    and timeout then apply, not ``ca_cert`` and ``timeout_s``); a client of its own otherwise."""
    if client is None:
        with open_client(ca_cert, timeout_s) as own:
            return _upload(own, url, token, body, backoff, sleep)
    return _upload(client, url, token, body, backoff, sleep)


def _upload(client: httpx.Client, url: str, token: str, body: bytes, backoff: Backoff,
            sleep: Callable[[float], None]) -> dict[str, Any]:
    target = url.rstrip("/") + UPLOAD_PATH
    headers = {"Authorization": f"Bearer {token}", "Content-Type": CONTENT_TYPE}
    manifest = manifest_of(body)
    if manifest is not None:
        headers[HEADER] = tag(tag_key(token), manifest)
    last = ""
    for attempt in range(backoff.tries):
        wait = None
        try:
            resp = client.post(target, content=body, headers=headers)
        except httpx.TransportError as exc:
            cert = _certificate_failure(exc)
            if cert is not None:
                raise UploadError(f"{url}: its certificate is not trusted "
                                  f"({cert.verify_message}); give the collector's CA with "
                                  "--ca-cert if it has a private one") from None
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
