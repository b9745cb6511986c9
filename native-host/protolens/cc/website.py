"""Igor's website step (CoNEXT'20 Sec. 4.1), pure: from a recorded navigation's hosts (bytes,
share, biggest object) pick the N hosts that carry the most bytes, one probe URL each."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HostTarget:
    host: str
    share: float
    """The host's share of the page's bytes."""
    url: str
    """Its biggest object: the probe fetches it."""
    object_bytes: int


def top_hosts(rows: Iterable[Mapping[str, Any]], n: int) -> list[HostTarget]:
    """Hosts by bytes, biggest first (ties by name); hosts without an http(s) object are left
    out."""
    if n < 1:
        raise ValueError("--top must be at least 1")
    good = [r for r in rows if str(r.get("biggest_url") or "").startswith(("http://", "https://"))]
    good.sort(key=lambda r: (-(r.get("bytes") or 0), str(r["host"])))
    return [HostTarget(str(r["host"]), float(r.get("share") or 0.0), str(r["biggest_url"]),
                       int(r.get("biggest_bytes") or 0)) for r in good[:n]]
