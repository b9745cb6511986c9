"""Which hosts each connection carried, from the record's requests (pure).

A record's ``Connection.host`` names one host, the first the browser saw on it. HTTP/2 and
HTTP/3 connection coalescing (RFC 9113 Sec. 9.1.1, RFC 9114 Sec. 3.3) lets one connection serve
several hosts whose certificate covers them all, so ``show``, the HAR export and the waterfall
list every host of a connection from the requests it carried.
"""

from __future__ import annotations

from protolens.record.model import Connection, NavigationRecord


def connection_hosts(record: NavigationRecord) -> dict[int, tuple[str, ...]]:
    """Browser-side connection id -> the hosts of its requests, in order of first request."""
    hosts: dict[int, list[str]] = {}
    for r in sorted(record.requests, key=lambda q: (q.start_ms, q.request_id)):
        if r.connection_id is None:
            continue
        seen = hosts.setdefault(r.connection_id, [])
        if r.host not in seen:
            seen.append(r.host)
    return {cid: tuple(h) for cid, h in hosts.items()}


def hosts_of(record: NavigationRecord, conn: Connection,
             carried: dict[int, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The hosts ``conn`` carried (an upstream connection: its own host)."""
    if conn.upstream:
        return (conn.host,)
    carried = connection_hosts(record) if carried is None else carried
    return carried.get(conn.connection_id) or (conn.host,)
