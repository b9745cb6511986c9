"""Probing a page's servers and keeping the results (adapter): the probe targets of a recorded
navigation (Igor's website step, CoNEXT'20 Sec. 4.1: its hosts that carry the most bytes, each
by its biggest object), a run of probes over URLs, and each result stored as it comes. The CLI
(``cc probe``) and ``lab reproduce conext20-igor`` call these and print."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

from protolens.cc.curl import ProbeError, parse_target
from protolens.cc.probe import ProbePath, ProbeResult, probe
from protolens.cc.website import top_hosts
from protolens.store import DatabaseError, StoreError, open_ro, open_rw
from protolens.store import cc as ccstore
from protolens.store.queries import resolve_id
from protolens.testbed import TestbedError


class StoreProbeError(RuntimeError):
    """A probe result the store would not take; the message is one line."""


def check_urls(urls: Sequence[str]) -> None:
    """``ProbeError`` (one line) for the first URL that cannot be probed."""
    for url in urls:
        parse_target(url)


def page_targets(db: Path, nav_id: str, top: int) -> list[str]:
    """The probe URLs of navigation ``nav_id`` (an id or its prefix): its ``top`` hosts by
    bytes, each by its biggest object. ``store.queries.NotFound`` for an unknown navigation,
    ``ProbeError`` if it has nothing to probe; the store's own errors pass through."""
    with closing(open_ro(db)) as conn:
        rows = ccstore.page_hosts(conn, resolve_id(conn, nav_id))
    targets = top_hosts(rows, top)
    if not targets:
        raise ProbeError(f"navigation {nav_id} has no http(s) object to probe")
    return [t.url for t in targets]


def store_probe(db: Path, res: ProbeResult, network: str) -> None:
    """One result into the store's ``cc_probes`` (``network``: ``lab`` or ``wan``)."""
    try:
        with closing(open_rw(db, time.time() * 1000)) as conn:
            ccstore.insert_probe(conn, res.row(), res.timeline.to_json(), network)
    except (StoreError, DatabaseError) as exc:
        raise StoreProbeError(f"{db}: cannot store the probe: {exc}") from None


def probe_urls(path: ProbePath, urls: Sequence[str], *, http: str = "1.1",
               packet_bytes: int | None = None, db: Path | None = None, network: str = "lab",
               starting: Callable[[str], None] | None = None,
               done: Callable[[str, ProbeResult | None, str | None], None] | None = None,
               ) -> list[ProbeResult]:
    """Probe each URL in turn through ``path``; each result is stored in ``db`` (unless None)
    as it comes. A URL that cannot be probed is passed to ``done`` with its error and left out;
    a result the store refuses stops the run (``StoreProbeError``)."""
    results = []
    for url in urls:
        if starting:
            starting(url)
        try:
            res = probe(path, url, http=http, packet_bytes=packet_bytes)
        except (ProbeError, TestbedError) as exc:
            if done:
                done(url, None, str(exc))
            continue
        results.append(res)
        if db is not None:
            store_probe(db, res, network)
        if done:
            done(url, res, None)
    return results
