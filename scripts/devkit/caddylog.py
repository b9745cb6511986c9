"""Reads caddy's JSON access log: the independent record of which request used which connection."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

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


def read_hits(path: Path, start: int = 0, end: int | None = None) -> list[Hit]:
    """Every request logged between bytes ``start`` and ``end`` of the log."""
    hits = []
    with path.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(end - start)
        for line in data.splitlines():
            entry = json.loads(line)
            req = entry.get("request")
            if not req:
                continue
            hits.append(Hit(host=req["host"].split(":")[0], uri=req["uri"],
                            family=FAMILY[req["proto"]], client_port=int(req["remote_port"]),
                            status=int(entry["status"]), size=int(entry["size"])))
    return hits
