"""The collector's HTTP application (Starlette; adapter). ``POST /v1/bundles`` takes one bundle
(``Content-Type: application/x-tar``, ``Authorization: Bearer <token>``); ``GET /v1/health``.

Answers: 201 stored, 200 already stored (same checksum), 401 no or unknown token, 403 revoked
token, 413 over a size limit, 415 wrong content type, 422 invalid bundle (the ``merge``
message), 429 over the token's rate (with ``Retry-After``). Errors are ``{"error": "..."}``.
The client's address is never read, and the log names the contributor, never the token.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from protolens.collector.ingest import Refusal, accept
from protolens.collector.layout import CATALOG
from protolens.collector.limits import Limits
from protolens.collector.ratelimit import RateLimiter
from protolens.collector.tokens import bearer, token_hash
from protolens.collector.wire import CONTENT_TYPE
from protolens.store.collector import open_catalog, token_owner

log = logging.getLogger("protolens.collector")


@dataclass(frozen=True)
class Settings:
    data: Path
    limits: Limits
    per_minute: float = 60.0
    burst: int = 30


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    log.info("refused (%d): %s", status, message)
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _owner(data: Path, digest: str) -> tuple[str, bool] | None:
    conn = open_catalog(data / CATALOG, time.time() * 1000, migrate=False)
    try:
        return token_owner(conn, digest)
    finally:
        conn.close()


async def _body(request: Request, limit: int) -> bytes | None:
    """The body, or None past ``limit`` bytes (stops reading there)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def make_app(settings: Settings) -> Starlette:
    limiter = RateLimiter(settings.per_minute, settings.burst)
    limits = settings.limits

    async def upload(request: Request) -> JSONResponse:
        token = bearer(request.headers.get("authorization"))
        if token is None:
            return _error(401, "no token (send Authorization: Bearer <token>)")
        digest = token_hash(token)
        owner = await run_in_threadpool(_owner, settings.data, digest)
        if owner is None:
            return _error(401, "unknown token")
        name, revoked = owner
        if revoked:
            return _error(403, f"token of {name} revoked")
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != CONTENT_TYPE:
            return _error(415, f"content type must be {CONTENT_TYPE} (got {ctype or 'none'})")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limits.max_bytes:
            return _error(413, f"bundle over the size limit ({limits.max_bytes} bytes)")
        wait = limiter.take(digest, time.monotonic())
        if wait > 0:
            retry = "3600" if math.isinf(wait) else str(max(1, math.ceil(wait)))
            return _error(429, f"{name}: over the upload rate ({settings.per_minute:g} per "
                               "minute)", {"Retry-After": retry})
        body = await _body(request, limits.max_bytes)
        if body is None:
            return _error(413, f"bundle over the size limit ({limits.max_bytes} bytes)")
        try:
            receipt = await run_in_threadpool(accept, settings.data, body, name,
                                              time.time() * 1000, limits, False)
        except Refusal as exc:
            return _error(exc.status, str(exc))
        log.info("%s bundle %s from %s", receipt.status, receipt.checksum, name)
        return JSONResponse(receipt.to_json(), status_code=201 if receipt.status == "stored"
                            else 200)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/v1/bundles", upload, methods=["POST"]),
                             Route("/v1/health", health, methods=["GET"])])
