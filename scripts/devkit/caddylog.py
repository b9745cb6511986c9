"""Reads caddy's JSON access log: the independent record of which request used which connection."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FAMILY = {"HTTP/1.1": "h1", "HTTP/1.0": "h1", "HTTP/2.0": "h2", "HTTP/3.0": "h3"}


@dataclass(frozen=True)
class Hit:
    host: str
    """Host name without port."""
    uri: str
    """Path and query as requested."""
    family: str
    """h1, h2 or h3 from caddy's `proto`."""
    client_port: int
    status: int
    size: int
    """Response body bytes caddy wrote."""
    method: str = "GET"
    port: int | None = None
    """The port named in the Host header (None when it names none)."""
    start: float = 0.0
    """When caddy began the request, epoch seconds (``ts``, logged at its end, less ``duration``):
    a WebSocket or a stream is logged only when it closes, long after the page that opened it."""
    duration: float = 0.0
    """Seconds from the request's arrival to caddy's last byte (or the stream's close)."""
    worker_script: bool = False
    """The request carried ``Service-Worker: script``, which a browser sends on every fetch of a
    service worker's script: its install and its update checks (W3C Service Workers, "Update",
    step 22.5)."""
    resumed: bool = False
    """The request came on a TLS session resumed from an earlier one (caddy's
    ``request.tls.resumed``; not logged over HTTP/3)."""
    referer: str = ""
    """The request's ``Referer`` header ("" without one): the document that sent it."""

    @property
    def conn(self) -> tuple[int, int, bool]:
        """(client port, server port, HTTP/3): its connection as netlog.Conn names it (the port
        the Host header names, 0 without one)."""
        return (self.client_port, self.port or 0, self.family == "h3")


def _port(host: str) -> int | None:
    _, sep, port = host.rpartition(":")
    return int(port) if sep and port.isdigit() else None


def read_entries(path: Path, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
    """Every whole line logged between bytes ``start`` and ``end`` of the log, parsed. A line caddy
    is still writing has no newline yet: it is left for a later read (a bench polling the log read
    one half-written and failed with a JSON error, 2026-11-28). Every reader of a log caddy may
    still be writing reads it through here."""
    with path.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(end - start)
    return [json.loads(line) for line in data[:data.rfind(b"\n") + 1].splitlines()
            if line.strip()]


def read_hits(path: Path, start: int = 0, end: int | None = None) -> list[Hit]:
    """Every request logged between bytes ``start`` and ``end`` of the log."""
    hits = []
    for entry in read_entries(path, start, end):
        req = entry.get("request")
        if not req:
            continue
        hits.append(Hit(host=req["host"].split(":")[0], uri=req["uri"],
                        family=FAMILY[req["proto"]], client_port=int(req["remote_port"]),
                        status=int(entry["status"]), size=int(entry["size"]),
                        method=str(req.get("method", "GET")),
                        port=_port(req["host"]),
                        start=float(entry["ts"]) - float(entry.get("duration", 0.0)),
                        duration=float(entry.get("duration", 0.0)),
                        worker_script=(req.get("headers") or {}).get("Service-Worker")
                        == ["script"],
                        resumed=bool((req.get("tls") or {}).get("resumed", False)),
                        referer=((req.get("headers") or {}).get("Referer") or [""])[0]))
    return hits


def hits_between(path: Path, start: float, end: float) -> list[Hit]:
    """Every request caddy began between epoch seconds ``start`` and ``end``, whenever it was
    logged: the requests of one page of a browser that loads several."""
    return [h for h in read_hits(path) if start <= h.start < end]
