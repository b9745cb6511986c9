"""Records -> HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), pure.

``protolens export --har`` (cli/export.py) loads records from the store and writes what
``to_har`` returns. One HAR page per navigation, one entry per request. What HAR has no field for
goes into ``_``-prefixed custom fields, which the spec allows anywhere; where DevTools or
WebPageTest already export a field we use their name (``_transferSize``, ``_priority``,
``_resourceType``, ``_error``, ``_socket``, ``_protocol``). docs/HAR.md lists them all.

Privacy: the record's ``url_detail`` is kept. A record stored at origin level exports origins
only, at path level no query strings; the reduction is applied again here in case a stored URL
carries more than its record says.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from protolens.record import NavigationRecord, Request

HAR_VERSION = "1.2"
UNKNOWN = -1
"""HAR's value for a size or timing that is not known (spec: ``-1 if the info is not
available``)."""


_DEVTOOLS_TYPES = {"SignedExchange": "signed-exchange",
                   "CSPViolationReport": "csp-violation-report"}
"""CDP ``Network.ResourceType`` values whose DevTools name is not just the lower-case spelling
(DevTools ``Common.ResourceType`` names)."""


def iso(epoch_ms: float) -> str:
    """ISO 8601 with milliseconds and ``Z``, as HAR's ``startedDateTime`` wants."""
    when = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def reduce_url(url: str, detail: str) -> str:
    """``url`` cut down to ``detail``: ``origin`` (scheme://host[:port]), ``path`` (no query or
    fragment) or ``full`` (unchanged)."""
    if detail == "full":
        return url
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url
    if detail == "origin":
        return urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _ms(value: float | None) -> float:
    return UNKNOWN if value is None else round(value, 3)


def _timings(r: Request) -> tuple[float, dict[str, float]]:
    """Total time and HAR timings (HAR 1.2 ``timings``; ``connect`` includes ``ssl``, and
    ``time`` is the sum of the others). From the request's phases when the record has them
    (CDP ``Response.timing``: docs/RECORD.md "Timings"), ``blocked`` being what is left of the
    request's time before them; otherwise from start, first byte and end, with DNS, connect and TLS
    unknown (``-1``) and send folded into wait."""
    end = r.end_ms if r.end_ms is not None else r.first_byte_ms
    if end is None:
        return 0.0, {"blocked": UNKNOWN, "dns": UNKNOWN, "connect": UNKNOWN, "ssl": UNKNOWN,
                     "send": 0, "wait": 0, "receive": 0}
    first = r.first_byte_ms if r.first_byte_ms is not None else end
    if r.wait_ms is not None:
        dns, connect, ssl = _ms(r.dns_ms), _ms(r.connect_ms), _ms(r.tls_ms)
        send, wait = round(r.send_ms or 0.0, 3), round(r.wait_ms, 3)
        known = max(0.0, dns) + max(0.0, connect) + send + wait
        receive = round(r.receive_ms if r.receive_ms is not None else max(0.0, end - first), 3)
        blocked = round(max(0.0, end - r.start_ms - known - receive), 3)
        return round(blocked + known + receive, 3), {
            "blocked": blocked, "dns": dns, "connect": connect, "ssl": ssl, "send": send,
            "wait": wait, "receive": receive}
    wait = max(0.0, first - r.start_ms)
    receive = max(0.0, end - max(first, r.start_ms))
    wait, receive = round(wait, 3), round(receive, 3)
    return round(wait + receive, 3), {  # HAR: time is the sum of the known timings
        "blocked": UNKNOWN, "dns": UNKNOWN, "connect": UNKNOWN, "ssl": UNKNOWN, "send": 0,
        "wait": wait, "receive": receive}


def _entry(rec: NavigationRecord, r: Request,
           shares: dict[int, tuple[float, int]]) -> dict[str, Any]:
    url = reduce_url(r.url, rec.page.url_detail)
    query = [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query,
                                                           keep_blank_values=True)]
    version = r.protocol or ""
    total, timings = _timings(r)
    share, conn_bytes = (None, None) if r.connection_id is None else shares.get(
        r.connection_id, (None, None))
    entry: dict[str, Any] = {
        "pageref": rec.id,
        "startedDateTime": iso(rec.page.started_at_ms + r.start_ms),
        "time": total,
        "request": {"method": r.method, "url": url, "httpVersion": version, "cookies": [],
                    "headers": [], "queryString": query, "headersSize": UNKNOWN,
                    "bodySize": UNKNOWN},
        "response": {"status": r.status or 0, "statusText": "", "httpVersion": version,
                     "cookies": [], "headers": [],
                     "content": {"size": r.body_bytes, "mimeType": r.mime_type or ""},
                     "redirectURL": "", "headersSize": UNKNOWN, "bodySize": UNKNOWN,
                     # where DevTools puts it (and haralyzer's page_size_trans reads it)
                     "_transferSize": r.encoded_bytes},
        "cache": {},
        "timings": timings,
        "_protocol": r.protocol,
        "_alternateProtocolUsage": r.alternate_protocol_usage,
        "_priority": r.priority,
        # DevTools writes and reads its own lower-case type names (``fetch``, ``xhr``); the CDP
        # spelling stays under _protolens
        "_resourceType": _DEVTOOLS_TYPES.get(r.resource_type, r.resource_type.lower()),
        "_protolens": {"request_id": r.request_id, "family": r.family,
                       "resource_type": r.resource_type,
                       "connection_id": r.connection_id, "connection_reused": r.connection_reused,
                       "connection_share": share, "connection_bytes": conn_bytes,
                       "first_byte_ms": r.first_byte_ms, "start_ms": r.start_ms,
                       "end_ms": r.end_ms, "is_main_document": r.is_main_document},
    }
    if r.connection_id is not None:
        entry["connection"] = str(r.connection_id)
        entry["_socket"] = r.connection_id
    if r.remote_ip:  # CDP writes IPv6 addresses in brackets; HAR wants the bare address
        entry["serverIPAddress"] = r.remote_ip.strip("[]")
    if r.from_disk_cache or r.from_memory_cache:
        entry["_fromCache"] = "memory" if r.from_memory_cache else "disk"
    if r.failed:
        entry["response"]["_error"] = r.failure or "failed"
    return entry


def _page(rec: NavigationRecord) -> dict[str, Any]:
    m = rec.milestones
    by_conn: dict[int, set[str]] = {}
    for r in rec.requests:
        if r.connection_id is not None:
            by_conn.setdefault(r.connection_id, set()).add(r.host)
    connections = [{
        "connection_id": c.connection_id, "upstream": c.upstream, "family": c.family,
        "hosts": sorted(by_conn.get(c.connection_id, {c.host})) if not c.upstream else [c.host],
        "remote_ip": c.remote_ip, "remote_port": c.remote_port, "requests": c.requests,
        "bytes": c.bytes, "share": c.share} for c in rec.connections]
    return {
        "startedDateTime": iso(rec.page.started_at_ms),
        "id": rec.id,
        "title": reduce_url(rec.page.url, rec.page.url_detail),
        "pageTimings": {"onContentLoad": _ms(m.dcl_ms), "onLoad": _ms(m.load_ms)},
        **{f"_{tag}": rec.context.get(tag) for tag in CAMPAIGN_TAGS},
        **{name: _visual(getattr(m, key)) for name, key in VISUAL_FIELDS},
        "_protolens": {
            "navigation_id": rec.id, "source": rec.source, "url_detail": rec.page.url_detail,
            "late_attach": rec.page.late_attach, "warm": rec.page.warm,
            "error": rec.page.error, "ttfb_ms": m.ttfb_ms, "fcp_ms": m.fcp_ms,
            "lcp_ms": m.lcp_ms, "first_image_ms": m.first_image_ms, "connections": connections},
    }


CAMPAIGN_TAGS = ("campaign", "arm", "condition", "page", "repetition")
"""The lab's tags on each page (``_campaign`` ...; null outside a campaign), so a campaign's HAR
can be split by arm and condition in any HAR tool."""
VISUAL_FIELDS = (("_render", "first_visual_change_ms"), ("_SpeedIndex", "speed_index_ms"),
                 ("_visualComplete85", "visual_complete_85_ms"),
                 ("_visualComplete99", "visual_complete_99_ms"),
                 ("_lastVisualChange", "last_visual_change_ms"))
"""The visual metrics under WebPageTest's page field names (its "start render" is the first
visual change); null for a load recorded without paint capture."""


def _visual(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def to_har(records: Iterable[NavigationRecord], creator_version: str) -> dict[str, Any]:
    """One HAR 1.2 log holding every record as a page with its entries."""
    recs = list(records)
    pages: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    for rec in recs:
        pages.append(_page(rec))
        shares = {c.connection_id: (c.share, c.bytes) for c in rec.connections if not c.upstream}
        entries.extend(_entry(rec, r, shares) for r in rec.requests)
    # the spec prefers entries sorted by startedDateTime (oldest first); ISO strings in UTC sort
    entries.sort(key=lambda e: str(e["startedDateTime"]))
    log: dict[str, Any] = {"version": HAR_VERSION,
                           "creator": {"name": "ProtoLens", "version": creator_version},
                           "pages": pages, "entries": entries}
    if recs:
        b = recs[0].page.browser
        log["browser"] = {"name": b.name, "version": b.version}
    return {"log": log}
