"""The collector's HTTP application (Starlette; adapter). ``POST /v1/bundles`` takes one bundle
(``Content-Type: application/x-tar``, ``Authorization: Bearer <token>``, the tag in
``ProtoLens-Bundle-Tag``); ``GET /v1/health``.

Answers: 201 stored, 200 already stored (same checksum, same token), 401 no or unknown token or
a tag that does not verify, 403 revoked token, 408 a body that stalls, 409 navigations stored
already, 413 over a size limit, 415 wrong content type, 422 invalid bundle (the ``merge``
message), 429 over the token's rate or too many failed authentications (``Retry-After``), 503
every upload place taken or a worker restarting (``Retry-After``). Errors are ``{"error": ...}``.

The body streams to a file in this process's own folder (never held in memory), at most
``max_uploads`` at once; at most ``validations`` are validated and encoded at once (each decodes
up to ``max_uncompressed`` bytes); their fsyncs and commits wait outside that limit. The peer
address is used in memory for the failed-authentication limit only (``authguard.py``); the log
names the contributor, never the token or the address.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import tempfile
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from protolens.collector.authguard import AuthGuard
from protolens.collector.balance import Board
from protolens.collector.connguard import BOARD_KEY, STATE_KEY
from protolens.collector.ingest import Receipt, Refusal, Upload, commit_staged, stage_file
from protolens.collector.ratelimit import RateLimiter
from protolens.collector.settings_serve import Settings
from protolens.collector.tags import HEADER
from protolens.collector.tokens import bearer, token_hash
from protolens.collector.wire import CONTENT_TYPE
from protolens.collector.writer import Writer
from protolens.store.collector import token_owner

log = logging.getLogger("protolens.collector")
__all__ = ["CONTENT_TYPE", "Settings", "make_app"]
COMMITS = 2
"""Uploads committed at once by one process (``commit_staged``)."""


def _error(status: int, message: str, headers: dict[str, str] | None = None,
           quiet: bool = False) -> JSONResponse:
    if not quiet:
        log.info("refused (%d): %s", status, message)
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _stream_to(request: Request, folder: Path, s: Settings) -> Path | int:
    """The body in a file of ``folder``, or the HTTP status that refuses it (413 past the size
    limit, 408 when a chunk or the whole body takes too long)."""
    fd, name = tempfile.mkstemp(prefix="upload-", suffix=".tar", dir=folder)
    size, ok = 0, False
    deadline = time.monotonic() + s.upload_timeout_s
    chunks = request.stream().__aiter__()
    try:
        with os.fdopen(fd, "wb") as out:
            while True:
                left = min(s.body_timeout_s, deadline - time.monotonic())
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), max(left, 0.001))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    return 408
                size += len(chunk)
                if size > s.limits.max_bytes:
                    return 413
                out.write(chunk)
        ok = True
        return Path(name)
    finally:
        if not ok:
            Path(name).unlink(missing_ok=True)


def make_app(s: Settings) -> Starlette:
    limiter = RateLimiter(s.per_minute, s.burst)
    guard = AuthGuard(RateLimiter(s.auth_per_minute, s.auth_burst),
                      RateLimiter(s.auth_global_per_minute,
                                              int(s.auth_global_per_minute)))
    # validations on threads of their own, always the same ones: the memory one validation
    # frees is reused by the next (glibc and jemalloc keep freed memory per thread or arena)
    validating = ThreadPoolExecutor(s.validations, thread_name_prefix="collector-validate")
    # commits (fsyncs, the catalog's transaction, the moves) on threads of their own too: two,
    # so one upload's fsyncs wait while another's commit runs (SQLite lets one write at a time
    # anyway), and two catalog connections with their page caches, not one per pool thread
    committing = ThreadPoolExecutor(COMMITS, thread_name_prefix="collector-commit")
    writer = Writer(s.data, s.lease_s)
    uploads = 0
    board: Board | None = None

    def note(line: str | None) -> None:
        if line:
            log.warning("%s", line)

    async def authenticate(request: Request, source: str
                           ) -> tuple[str, str | None, str] | JSONResponse:
        token = bearer(request.headers.get("authorization"))
        digest = "" if token is None else token_hash(token)
        owner = None if token is None else await run_in_threadpool(
            writer.shared_read, lambda conn: token_owner(conn, digest))
        if owner is None or owner[1]:
            guard.failed(source, time.monotonic())
            if token is None:
                return _error(401, "no token (send Authorization: Bearer <token>)", quiet=True)
            if owner is None:
                return _error(401, "unknown token", quiet=True)
            return _error(403, f"token of {owner[0]} revoked", quiet=True)
        return owner[0], owner[2], digest

    async def upload(request: Request) -> JSONResponse:
        nonlocal uploads
        source = request.client.host if request.client else "?"
        wait, line = guard.check(source, time.monotonic())
        note(line)
        if wait > 0:
            return _error(429, "too many failed authentications; try later",
                          {"Retry-After": str(max(1, math.ceil(wait)))}, quiet=True)
        who = await authenticate(request, source)
        if isinstance(who, JSONResponse):
            return who
        name, key, digest = who
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != CONTENT_TYPE:
            return _error(415, f"content type must be {CONTENT_TYPE} (got {ctype or 'none'})")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > s.limits.max_bytes:
            return _error(413, f"bundle over the size limit ({s.limits.max_bytes} bytes)")
        wait = limiter.take(digest, time.monotonic())
        if wait > 0:
            retry = "3600" if math.isinf(wait) else str(max(1, math.ceil(wait)))
            return _error(429, f"{name}: over the upload rate ({s.per_minute:g} per minute)",
                          {"Retry-After": retry})
        if key is None:
            return _error(401, f"the token of {name} was issued before bundle tags; ask for a "
                               "new token")
        if uploads >= s.max_uploads:
            return _error(503, f"{s.max_uploads} uploads in progress; try again shortly",
                          {"Retry-After": "5"})
        uploads += 1
        try:
            return await _receive(request, name, key)
        finally:
            uploads -= 1

    async def _receive(request: Request, name: str, key: str) -> JSONResponse:
        try:
            got = await _stream_to(request, writer.folder, s)
        except ClientDisconnect:
            return _error(400, "the client went away during the upload")
        except FileNotFoundError:  # this writer's folder was swept: it lost its lease
            return _error(503, "the collector is restarting a worker; send it again",
                          {"Retry-After": "1"})
        if got == 413:
            return _error(413, f"bundle over the size limit ({s.limits.max_bytes} bytes)")
        if isinstance(got, int):
            return _error(408, "the upload stalled (send the body without pauses)")
        who = Upload(name, request.headers.get(HEADER), key)
        try:
            staged = await asyncio.get_running_loop().run_in_executor(
                validating, stage_file, got, who, time.time() * 1000, s.limits, writer)
            # the validation place is free again: the fsyncs and the catalog's commit wait for
            # the disk, not the CPU, and hold no decoded table
            receipt = staged if isinstance(staged, Receipt) else \
                await asyncio.get_running_loop().run_in_executor(
                    committing, commit_staged, s.data, staged, writer)
        except Refusal as exc:
            if exc.status == 401:
                guard.failed(request.client.host if request.client else "?", time.monotonic())
            return _error(exc.status, str(exc),
                          {"Retry-After": "1"} if exc.status == 503 else None)
        except FileNotFoundError:
            return _error(503, "the collector is restarting a worker; send it again",
                          {"Retry-After": "1"})
        finally:
            got.unlink(missing_ok=True)
        log.info("%s bundle %s from %s", receipt.status, receipt.checksum, name)
        # a worker holding more connections than the others lets this one go (balance.py)
        shed = board is not None and board.shed()  # a few small reads
        return JSONResponse(receipt.to_json(), status_code=201 if receipt.status == "stored"
                            else 200, headers={"Connection": "close"} if shed else None)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        nonlocal board
        await run_in_threadpool(writer.register)
        try:
            await run_in_threadpool(writer.sweep)
        except OSError as exc:  # the next one, a lease period later, tries again
            log.warning("start-up sweep: %s", exc)
        # the stored navigation keys read now, outside any write lock: a commit then reads only
        # the rows committed since (``store/collector_navindex.py``)
        await run_in_threadpool(writer.shared_read, writer.navs.sync)
        writer.heartbeat()
        board = Board(Path(s.board)) if s.board else None
        yield {STATE_KEY: s.connections, BOARD_KEY: board}
        if board is not None:
            board.close()
        await run_in_threadpool(writer.release)
        validating.shutdown()
        committing.shutdown()

    return Starlette(routes=[Route("/v1/bundles", upload, methods=["POST"]),
                             Route("/v1/health", health, methods=["GET"])], lifespan=lifespan)
