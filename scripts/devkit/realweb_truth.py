"""What a driven browser's records say against caddy's log and the NetLog, page by page (tests).

Records are read from the store as the host stored them (every column of ``navigations`` and
``requests``, so contract fields the recorder gains, such as ``kind`` or ``open_at_end``, are
there once the store has them); caddy's hits are sliced by request start between one step's
start and the next's (devkit/caddylog.py ``Hit.start``).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scripts.devkit.caddylog import Hit
from scripts.devkit.drive import Step
from scripts.devkit.netlog import Conn

LEFT = ("/beacon?on=pagehide", "/beacon?on=keepalive")
"""What /unload/ sends at pagehide (a beacon, a keepalive fetch, to e.test): the page being left
sends them while the next one loads, after its own record ended (realweb_www/a.test/unload)."""


@dataclass
class Page:
    name: str
    navs: list[dict[str, Any]]
    """The step's records (navigations rows), in the order stored; each has "requests"."""
    hits: list[Hit]
    """caddy's requests begun during the step."""
    seconds: float = 0.0
    """How long the step waited for its records."""
    timed_out: bool = False
    """No record came within the step's time (devkit/drive.py Step.timed_out)."""
    aborted: list[Hit] = field(default_factory=list)
    """Requests the backend got that caddy never logged (aborted responses: no client port)."""
    left: list[Hit] = field(default_factory=list)
    """Requests begun during the step that the page before sent as it was left (``LEFT``), not
    in ``hits``: no record holds them."""

    def nav(self, path: str) -> dict[str, Any]:
        """The record whose URL's path (and query) is ``path``."""
        assert not self.timed_out, f"{self.name}: no record within the step's time"
        found = [n for n in self.navs if _target(n["url"]) == path]
        assert len(found) == 1, f"{self.name}: {len(found)} records of {path}: " \
                                f"{[n['url'] for n in self.navs]}"
        return found[0]

    def requests(self) -> list[dict[str, Any]]:
        return [r for n in self.navs for r in n["requests"]]


def _target(url: str) -> str:
    u = urlsplit(url)
    return u.path + (f"?{u.query}" if u.query else "")


def key(url: str, method: str) -> tuple[str, int | None, str, str]:
    """(host, port, path?query, method): a request as both the record and caddy name it."""
    u = urlsplit(url)
    return (u.hostname or "", u.port, _target(url), method)


def hit_key(h: Hit) -> tuple[str, int | None, str, str]:
    return (h.host, h.port, h.uri, h.method)


NEVER_SENT = ("blocked:", "net::ERR_BLOCKED_BY_", "net::ERR_CONNECTION_REFUSED",
              "net::ERR_UNSAFE_PORT", "net::ERR_NAME_NOT_RESOLVED")
"""How a request that reached no server fails: the browser blocked it (a page's
Content-Security-Policy, an extension), or nothing took its connection (realweb_www/.../errors)."""


NOWHERE_PORT = 2
"""The port nothing listens on, on any host of the site (realweb_www: /errors/'s refused image,
/stream/'s refused WebSocket): a request to it reached no server, whatever its record calls the
failure (a WebSocket's is unnamed through chrome.debugger: "failed")."""


def on_network(req: dict[str, Any]) -> bool:
    """A request that reached a server (not a cache hit, not data: or blob:, not a document a
    speculation rule's prefetch served: no connection and no byte on the wire, docs/RECORD.md;
    not one that failed before it left, ``NEVER_SENT``)."""
    if req["failed"] and (req["failure"] or "").startswith(NEVER_SENT):
        return False
    if urlsplit(req["url"]).port == NOWHERE_PORT:
        return False
    return (urlsplit(req["url"]).scheme in ("http", "https", "ws", "wss")
            and not req["from_memory_cache"] and not req["from_disk_cache"]
            and not (req["from_service_worker"] and req["connection_id"] is None)
            and not (req["is_main_document"] and req["connection_id"] is None
                     and req["encoded_bytes"] == 0 and not req["failed"]))


def read_navs(db: Path, ids: list[str]) -> list[dict[str, Any]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        out = []
        for nav_id in ids:
            nav = dict(conn.execute("SELECT * FROM navigations WHERE id = ?", (nav_id,)).fetchone())
            nav["requests"] = [dict(r) for r in conn.execute(
                "SELECT * FROM requests WHERE navigation_id = ? ORDER BY seq", (nav_id,))]
            out.append(nav)
    return out


def pages(db: Path, steps: dict[str, Step], hits: list[Hit], aborted: list[Hit]
          ) -> dict[str, Page]:
    order = sorted(steps.values(), key=lambda s: s.started)
    out = {}
    for i, step in enumerate(order):
        end = order[i + 1].started if i + 1 < len(order) else float("inf")
        navs = read_navs(db, step.ids)
        hosts = {urlsplit(n["url"]).hostname for n in navs}
        # a worker script fetched from a host none of the step's pages is on: the browser
        # checking another site's registration for an update after a load it controlled
        # (Chromium does so a few seconds later), not a request of this step's page
        during = [h for h in hits if step.started <= h.start < end
                  and not (h.worker_script and h.host not in hosts)]
        out[step.name] = Page(step.name, navs, [h for h in during if h.uri not in LEFT],
                              step.ended - step.started, step.timed_out,
                              [h for h in aborted if step.started <= h.start < end],
                              [h for h in during if h.uri in LEFT])
    return out


def aborted_hits(backend_log: Path, caddy: list[Hit]) -> list[Hit]:
    """Requests the backend received that caddy never logged (their response was aborted), as
    hits without a client port."""
    logged = Counter((h.host, h.port, h.uri) for h in caddy)
    out = []
    for line in backend_log.read_text().splitlines():
        e = json.loads(line)
        host, _, port = e["host"].rpartition(":")
        k = (host, int(port) if port.isdigit() else None, e["uri"])
        if logged[k] > 0:
            logged[k] -= 1
            continue
        out.append(Hit(host=host, uri=e["uri"], family="", client_port=0, status=0, size=0,
                       method=e["method"], port=k[1], start=float(e["ts"])))
    return out


UNSEEN = {"service_worker_fetches": ("/sw/sw.js", "/sw/precache.json"),
          "shared_worker_fetches": ("/workers/w2.json",),
          "early_hints_preloads": ("/hints/hint.css", "/hints/hint.png"),
          "download_transfers": ("/download/file.bin",)}
"""What a record may leave out when it says DevTools could not see it (``page.not_seen``): the
requests of the site's service worker and shared worker themselves, the objects its 103 Early
Hints preload (fetched once more by the page, so one of each), the download's transfer
(docs/RECORD.md). Each declared path is taken off caddy's requests once."""


def declared(nav: dict[str, Any]) -> list[str]:
    """The record's ``not_seen``."""
    return list(json.loads(nav.get("not_seen") or "[]"))


def unseen_request(nav: dict[str, Any], req: dict[str, Any]) -> bool:
    """A request its record keeps but says it could not see on the wire: a WebSocket (CDP gives
    it no connection or protocol), a shared worker's script (answered on the worker's target)."""
    kinds = declared(nav)
    return (("websocket_connections" in kinds and req["resource_type"] == "WebSocket") or
            ("shared_worker_fetches" in kinds and req["resource_type"] == "Script" and
             req["family"] is None and req["end_ms"] is None))


def unseen_hits(page: Page) -> list[Hit]:
    """caddy's hits that a record of the page declares unseen (``UNSEEN``), and the worker's
    fetches behind requests the service worker answered (the site's worker fetches each request
    it answers): their connections carry bytes no record can hold."""
    kinds_of = [declared(n) for n in page.navs]
    paths = {p for kinds in kinds_of for kind in kinds for p in UNSEEN.get(kind, ())}
    pairs = zip(page.navs, kinds_of, strict=True)
    answered = {key(r["url"], r["method"] or "GET") for n, kinds in pairs
                if "service_worker_fetches" in kinds for r in n["requests"]
                if r["from_service_worker"]}
    sockets = {key(r["url"], r["method"] or "GET") for n in page.navs for r in n["requests"]
               if unseen_request(n, r)}
    return [h for h in page.hits if h.uri in paths or hit_key(h) in answered or
            hit_key(h) in sockets]


def served_pairs(page: Page) -> list[tuple[dict[str, Any], Hit]]:
    """(recorded request, caddy's hit for it) pairs, in order of start per request key; requests
    the record says it could not see on the wire (``unseen_request``), those that did not go
    to the network, and those still open with no response when the record ended (a long poll:
    nothing of the answer to compare; caddy may log it, status 0, once the browser drops it) are
    left out."""
    hits: dict[Any, list[Hit]] = defaultdict(list)
    for h in sorted(page.hits, key=lambda h: h.start):
        hits[hit_key(h)].append(h)
    out = []
    for n in page.navs:
        for r in n["requests"]:
            if unseen_request(n, r) or (r["end_ms"] is None and r["status"] is None):
                continue
            if on_network(r) and hits.get(k := key(r["url"], r["method"] or "GET")):
                out.append((r, hits[k].pop(0)))
    return out


def request_diff(page: Page) -> tuple[Counter[Any], Counter[Any]]:
    """(served but not recorded, recorded but not served), per request key; served = caddy's
    log and the backend's aborted requests, less the requests a record of the page declares
    unseen. A step without its record fails here."""
    assert not page.timed_out, f"{page.name}: no record within the step's time"
    # the site's worker answers every request with its own fetch of the same URL (sw.js): a
    # request the worker answered is one of caddy's when the record says the worker's fetches
    # were not seen
    through = {n["id"] for n in page.navs
               if "service_worker_fetches" in json.loads(n.get("not_seen") or "[]")}
    recorded = Counter(key(r["url"], r["method"] or "GET") for r in page.requests()
                       if on_network(r) or (r["from_service_worker"]
                                            and r["navigation_id"] in through))
    unseen = {path for n in page.navs for kind in declared(n) for path in UNSEEN.get(kind, ())}
    served = Counter(hit_key(h) for h in page.hits + page.aborted)
    served -= Counter(hit_key(h) for h in {h.uri: h for h in page.hits + page.aborted
                                            if h.uri in unseen}.values())
    missing = served - recorded
    # a record that says its first requests may have gone before the attach (everyday: the
    # debugger attaches at each navigation) may miss those begun before the first request it
    # saw, none after (caddy's and Chromium's wall clocks are this machine's: 50 ms of slack);
    # its main document is read from Navigation Timing, so its start says nothing of the attach
    for n in page.navs:
        if "requests_before_attach" not in declared(n):
            continue
        starts = [r["start_ms"] for r in n["requests"]
                  if r["start_ms"] is not None and not r["is_main_document"]]
        # a record with no request of its own (late_attach "missed": a document committed and
        # left before the attach) may miss what came before the page's next record began
        later = [m["started_at_ms"] for m in page.navs if m["started_at_ms"] > n["started_at_ms"]]
        seen_ms = (n["started_at_ms"] + min(starts) if starts
                   else min(later) if not n["requests"] and later else float("inf"))
        missing -= Counter(hit_key(h) for h in page.hits if h.start < seen_ms / 1000 + 0.05)
        # an out-of-process frame already loading at the attach is attached running: its own
        # requests until its session's Network.enable are not seen (CI run 39: /frame/'s b.test
        # stylesheet), nor are those of a frame inside it until its own attach. Each such
        # frame's host may miss those begun before the first request seen on that frame
        # (any of them if none was), none after
        for frame, host in _child_frames(n):
            own = [r["start_ms"] for r in n["requests"] if r["frame_id"] == frame
                   and r["resource_type"] != "Document" and r["start_ms"] is not None]
            first = n["started_at_ms"] + min(own) if own else float("inf")
            missing -= Counter(hit_key(h) for h in page.hits
                               if h.host == host and h.start < first / 1000 + 0.05)
    return missing, recorded - served


def _child_frames(nav: dict[str, Any]) -> list[tuple[str, str]]:
    """(frame id, host) of each frame's document in a record on another host than the page's (a
    frame of the page's own site is in its process, seen by the tab's session). A frame whose
    document the record lacks (it went before the frame's attach, with its first objects: the
    everyday /frame/ once, 2026-11-29, b.test's document, stylesheet and image) is placed on the
    host of its first request seen."""
    main = urlsplit(nav["url"]).hostname
    docs = {r["frame_id"]: urlsplit(r["url"]).hostname or "" for r in nav["requests"]
            if r["resource_type"] == "Document" and not r["is_main_document"]
            and r["frame_id"] is not None}
    main_frames = {r["frame_id"] for r in nav["requests"] if r["is_main_document"]}
    for r in sorted(nav["requests"], key=lambda r: r["start_ms"] if r["start_ms"] is not None
                    else float("inf")):
        if r["frame_id"] is not None and r["frame_id"] not in main_frames:
            docs.setdefault(r["frame_id"], urlsplit(r["url"]).hostname or "")
    return [(frame, host) for frame, host in docs.items() if host != main]


@dataclass
class ConnectionBytes:
    """The records' bytes per connection (caddy's ``Hit.conn``), for the checks against the
    NetLog."""
    recorded: dict[Conn, int]
    carried: dict[Conn, list[tuple[str, str, str, int, int]]]
    """Per connection, (page, host, uri, status, bytes) of each request it carried: messages."""
    left_out: set[Conn]
    """Connections no record can hold exactly: a WebSocket's or EventSource's (they keep
    receiving after every record has ended) and those that carried requests declared unseen."""
    inexact: set[Conn]
    """Connections that carried a beacon sent as a page was left (no record holds it) or a
    response cut short by a stop (recorded as far as it came; more may have been in flight)."""


def connection_bytes(pages: Iterable[Page]) -> ConnectionBytes:
    """Sums each request's recorded bytes onto the connection caddy logged it on; a response cut
    short (stop) usually has no caddy line, and is then put on its connection id's."""
    pages = list(pages)
    out = ConnectionBytes(defaultdict(int), defaultdict(list), set(), set())
    conn_of = {r["connection_id"]: h.conn for page in pages
               for r, h in served_pairs(page) if r["connection_id"] is not None}
    for page in pages:
        for r, h in served_pairs(page):
            out.recorded[h.conn] += r["encoded_bytes"]
            out.carried[h.conn].append((page.name, h.host, h.uri, h.status,
                                               r["encoded_bytes"]))
            # failed after its response began (a stop), yet in caddy's log: caddy may log it,
            # with its client port, once the browser drops it. Not seen in 16 runs by hand; the
            # likeliest account of CI run 48, where an h1 connection was 68 bytes over its
            # records, as a stopped object's connection was (inexact) in those runs
            if r["failed"] and r["status"] is not None:
                out.inexact.add(h.conn)
        aborted = {hit_key(h) for h in page.aborted}
        for r in page.requests():
            if (key(r["url"], r["method"] or "GET") in aborted and r["failed"]
                    and r["connection_id"] in conn_of):
                out.recorded[conn_of[r["connection_id"]]] += r["encoded_bytes"]
                out.inexact.add(conn_of[r["connection_id"]])
        out.inexact |= {h.conn for h in page.left}
        out.left_out |= {h.conn for h in page.hits if h.uri in ("/ws", "/sse")}
        out.left_out |= {h.conn for h in unseen_hits(page)}
    return out


def contract(nav: dict[str, Any], field: str) -> Any:
    """A contract field of the record (docs: HELPERS "Record fields being added"), JSON lists
    decoded; an AssertionError naming it while the store has no such column."""
    if field not in nav:
        raise AssertionError(f"the stored record has no {field!r} (contract field not stored yet)")
    value = nav[field]
    return json.loads(value) if isinstance(value, str) and value.startswith("[") else value
