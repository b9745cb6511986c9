"""The connection waterfall's series, pure: a record in, one row per connection out.

As WebPageTest's connection view: rows grouped by host (in order of the host's first request),
each labelled with its protocol, request count and byte share; each request a bar from start to
end with its first byte, and the connection's set-up before the request that opened it; the page
milestones as vertical lines. Requests with no connection (cache hits) get one row per host. For
a proxied lab load the proxy's upstream connections follow as their own rows, spanning their
first to last use, as they were on the wire. The extension's page draws the same rows
(src/waterfall/series.ts); plots/waterfall.py draws these.
"""

from __future__ import annotations

from dataclasses import dataclass

from protolens.record import Connection, NavigationRecord, Request
from protolens.record.coalesce import connection_hosts

MILESTONES = (("TTFB", "ttfb_ms"), ("FCP", "fcp_ms"), ("LCP", "lcp_ms"), ("load", "load_ms"))


@dataclass(frozen=True)
class Bar:
    request_id: str
    """The request drawn."""
    start_ms: float
    """Request start, from navigation start."""
    first_byte_ms: float | None
    """First response byte (the mark on the bar)."""
    end_ms: float
    """End (or first byte, or start, when the end is unknown)."""
    host: str
    """The request's host (several on a coalesced connection)."""
    failed: bool
    """The request failed."""
    setup: tuple[float, float] | None = None
    """For the request that opened its connection: the DNS + connect span it waited for."""


@dataclass(frozen=True)
class Row:
    key: str
    """``c<id>`` a browser connection, ``u<id>`` an upstream one, ``cache:<host>`` no
    connection."""
    group: str
    """The host the row is grouped under (a connection's first host)."""
    label: str
    """``host · h2 · 3 req · 41.2%`` (all hosts of a coalesced connection)."""
    protocol: str
    """Family (``h1``/``h2``/``h3``), ``cache``, or ``?``."""
    requests: int
    """Requests on the row."""
    share: float
    """Byte share of the connection in the page, in [0, 1] (0 for a cache row)."""
    upstream: bool
    """An upstream connection of the lab's proxy."""
    bars: tuple[Bar, ...]
    """The row's requests (an upstream row: one span from first to last use)."""


@dataclass(frozen=True)
class Waterfall:
    title: str
    """Page URL and navigation id."""
    rows: tuple[Row, ...]
    """Top to bottom."""
    milestones: tuple[tuple[str, float], ...]
    """Name and time of each known milestone."""
    end_ms: float
    """Right edge: the latest bar end or milestone."""


def setup_span(r: Request) -> tuple[float, float] | None:
    """The DNS + connect span of a request that opened its connection (docs/RECORD.md
    "Timings"): send, wait and receive follow each other up to its end, so the connection was
    ready at end - receive - wait - send."""
    if r.connection_reused is not False or r.connect_ms is None or r.wait_ms is None or \
            r.end_ms is None:
        return None
    ready = r.end_ms - (r.receive_ms or 0.0) - r.wait_ms - (r.send_ms or 0.0)
    return round(ready - r.connect_ms - (r.dns_ms or 0.0), 3), round(ready, 3)


def _bar(r: Request) -> Bar:
    end = r.end_ms if r.end_ms is not None else (
        r.first_byte_ms if r.first_byte_ms is not None else r.start_ms)
    return Bar(r.request_id, r.start_ms, r.first_byte_ms, max(end, r.start_ms), r.host, r.failed,
               setup_span(r))


def _label(hosts: tuple[str, ...], protocol: str, n: int, share: float | None) -> str:
    coalesced = " (coalesced)" if len(hosts) > 1 else ""
    tail = "" if share is None else f" · {share * 100:.1f}%"
    return f"{', '.join(hosts)}{coalesced} · {protocol} · {n} req{tail}"


def _upstream_row(c: Connection) -> Row:
    first = c.first_ms if c.first_ms is not None else 0.0
    last = c.last_ms if c.last_ms is not None else first
    span = Bar(f"upstream:{c.connection_id}", first, None, max(first, last), c.host, False)
    protocol = c.family or "?"
    return Row(f"u{c.connection_id}", c.host, "upstream " + _label((c.host,), protocol,
                                                                     c.requests, c.share),
               protocol, c.requests, c.share, True, (span,))


def waterfall_series(rec: NavigationRecord) -> Waterfall:
    """The rows and milestones of ``rec``'s waterfall; every request is on exactly one row."""
    ordered = sorted(rec.requests, key=lambda r: (r.start_ms, r.request_id))
    host_order = list(dict.fromkeys(r.host for r in ordered))
    carried = connection_hosts(rec)
    conns = {c.connection_id: c for c in rec.connections if not c.upstream}
    by_row: dict[str, list[Request]] = {}
    for r in ordered:
        by_row.setdefault(f"c{r.connection_id}" if r.connection_id is not None
                          else f"cache:{r.host}", []).append(r)
    rows: list[Row] = []
    for key, reqs in by_row.items():
        if key.startswith("cache:"):
            host = reqs[0].host
            rows.append(Row(key, host, _label((host,), "cache", len(reqs), None), "cache",
                            len(reqs), 0.0, False, tuple(_bar(r) for r in reqs)))
            continue
        cid = int(key[1:])
        hosts = carried.get(cid, (reqs[0].host,))
        conn = conns.get(cid)
        family = (conn.family if conn else None) or next(
            (r.family for r in reqs if r.family), None) or "?"
        share = conn.share if conn else 0.0
        rows.append(Row(key, hosts[0], _label(hosts, family, len(reqs), share), family,
                        len(reqs), share, False, tuple(_bar(r) for r in reqs)))
    rank = {h: i for i, h in enumerate(host_order)}
    rows.sort(key=lambda row: (rank.get(row.group, len(rank)), row.key.startswith("cache:"),
                               row.bars[0].start_ms))
    rows.extend(_upstream_row(c) for c in sorted(
        (c for c in rec.connections if c.upstream), key=lambda c: (c.first_ms or 0.0,
                                                                   c.connection_id)))
    milestones = tuple((name, float(v)) for name, attr in MILESTONES
                       if (v := getattr(rec.milestones, attr)) is not None)
    ends = [b.end_ms for row in rows for b in row.bars] + [t for _, t in milestones]
    return Waterfall(f"{rec.page.url} ({rec.id[:8]})", tuple(rows), milestones,
                     max(ends, default=0.0))
