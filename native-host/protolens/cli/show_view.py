"""What ``protolens show ID`` prints for a human, pure: a record in, rows of text out.

Per host, per connection (every host a coalesced connection carried, record/coalesce.py) and per
request, with sizes, shares and a small bar. cli/show.py prints them as tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protolens.cli.output import human_bytes, human_time, shorten_middle
from protolens.record import Connection, NavigationRecord
from protolens.record.coalesce import connection_hosts, hosts_of

BAR_WIDTH = 20
"""Characters of a full (100 %) share bar."""
REQUEST_URL_WIDTH = 56


@dataclass(frozen=True)
class ShowView:
    header: tuple[str, ...]
    """The page, its source and start, and its milestones, one line each."""
    hosts: tuple[dict[str, str], ...]
    """Per host: protocol, connections, requests, bytes, share."""
    connections: tuple[dict[str, str], ...]
    """Per browser-side connection: protocol, remote endpoint, hosts, requests, bytes, share."""
    upstream: tuple[dict[str, str], ...]
    """Per connection the lab's proxy opened to the server (empty outside proxied lab loads)."""
    requests: tuple[dict[str, str], ...]
    """Per request, in recorded order."""


def bar(share: float, width: int = BAR_WIDTH) -> str:
    """A share in [0, 1] as a bar of block characters, eighths included."""
    eighths = round(max(0.0, min(1.0, share)) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + ("" if part == 0 else " ▏▎▍▌▋▊▉"[part])


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def _protocol(rec: NavigationRecord, conn: Connection) -> str:
    raw = sorted({r.protocol for r in rec.requests
                  if r.connection_id == conn.connection_id and r.protocol and not conn.upstream})
    return "/".join(raw) or (conn.family or "?")


def _connection_row(rec: NavigationRecord, c: Connection,
                    carried: dict[int, tuple[str, ...]]) -> dict[str, str]:
    hosts = hosts_of(rec, c, carried)
    remote = (f"{c.remote_ip}:{c.remote_port}" if c.remote_port is not None else c.remote_ip) \
        if c.remote_ip else "—"
    return {"connection": str(c.connection_id), "protocol": _protocol(rec, c), "remote": remote,
            "hosts": ", ".join(hosts) + (" (coalesced)" if len(hosts) > 1 else ""),
            "requests": str(c.requests), "bytes": human_bytes(c.bytes), "share": _pct(c.share),
            "bar": bar(c.share)}


def show_view(rec: NavigationRecord) -> ShowView:
    m, page = rec.milestones, rec.page
    header = [
        page.url,
        f"id {rec.id} · {rec.source} · started {human_time(page.started_at_ms)} · "
        f"{page.browser.name} {page.browser.version}",
        " · ".join(f"{name} {_ms(v)}" for name, v in (
            ("TTFB", m.ttfb_ms), ("FCP", m.fcp_ms), ("LCP", m.lcp_ms), ("DCL", m.dcl_ms),
            ("load", m.load_ms), ("first image", m.first_image_ms))),
    ]
    if m.speed_index_ms is not None:
        header.append(" · ".join(f"{name} {_ms(v)}" for name, v in (
            ("first visual change", m.first_visual_change_ms), ("SpeedIndex", m.speed_index_ms),
            ("VC85", m.visual_complete_85_ms), ("VC99", m.visual_complete_99_ms),
            ("last visual change", m.last_visual_change_ms))))
    notes = [x for x in (
        ("shown from a prerender (its requests came during the prerender, before the attach: "
         "none recorded, docs/RECORD.md)" if page.kind == "prerender" else
         f"{page.kind} navigation") if page.kind not in (None, "navigation") else None,
        page.error, "aborted" if page.aborted else None, "warm" if page.warm else None,
        ("late_attach missed (committed and left before the attach: no request seen, "
         "docs/RECORD.md)" if page.late_attach == "missed" else
         f"late_attach {page.late_attach} (joined under way, docs/RECORD.md)")
        if page.late_attach else None,
        "incomplete: " + ", ".join(page.incomplete_reasons or ()) if page.incomplete else None,
        f"{page.open_at_end} request(s) open at the end" if page.open_at_end else None,
        f"{page.downloads} download(s)" if page.downloads else None,
        "not seen: " + ", ".join(page.not_seen) if page.not_seen else None) if x]
    if notes:
        header.append("note: " + "; ".join(notes))
    total = sum(r.encoded_bytes for r in rec.requests)
    per_host: dict[str, dict[str, Any]] = {}
    for r in rec.requests:
        h = per_host.setdefault(r.host, {"protocols": set(), "conns": set(), "n": 0, "bytes": 0})
        h["n"] += 1
        h["bytes"] += r.encoded_bytes
        if r.protocol:
            h["protocols"].add(r.protocol)
        if r.connection_id is not None:
            h["conns"].add(r.connection_id)
    hosts = tuple({"host": host, "protocol": "/".join(sorted(h["protocols"])) or "cache",
                   "connections": str(len(h["conns"])), "requests": str(h["n"]),
                   "bytes": human_bytes(h["bytes"]),
                   "share": _pct(h["bytes"] / total if total else 0.0)}
                  for host, h in sorted(per_host.items(), key=lambda kv: (-kv[1]["bytes"], kv[0])))
    carried = connection_hosts(rec)

    def order(c: Connection) -> tuple[int, int]:
        return (-c.bytes, c.connection_id)

    conns = tuple(_connection_row(rec, c, carried)
                  for c in sorted((c for c in rec.connections if not c.upstream), key=order))
    upstream = tuple(_connection_row(rec, c, carried)
                     for c in sorted((c for c in rec.connections if c.upstream), key=order))
    requests = tuple({
        "method": r.method, "status": "failed" if r.failed else str(r.status or "—"),
        "type": r.resource_type, "protocol": r.protocol or ("cache" if r.from_disk_cache
                                                            or r.from_memory_cache else "—"),
        "conn": "—" if r.connection_id is None else str(r.connection_id),
        "size": human_bytes(r.encoded_bytes), "start": _ms(r.start_ms),
        "duration": "—" if r.end_ms is None else _ms(r.end_ms - r.start_ms),
        "url": shorten_middle(r.url, REQUEST_URL_WIDTH)} for r in rec.requests)
    return ShowView(tuple(header), hosts, conns, upstream, requests)
