"""Anonymization of store rows for a shared bundle (pure; the salt comes in from the caller).

- Every URL is reduced to its origin; the host becomes ``anon-<16 hex>``, an HMAC-SHA256 of the
  host under a random per-bundle salt that is never written anywhere, unless the host's domain is
  on the user's allowlist (then the origin stays in clear; never a path or query).
- No IP addresses (``remote_ip`` dropped), no CDP frame ids, no command lines, no free-form
  context: the context keeps only the tag columns.
- Wall-clock times are floored to the minute; the browser is reduced to name and major version.
- Error strings are kept only when they are Chromium's ``net::ERR_*`` codes.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

MINUTE_MS = 60_000
TAGS = ("campaign", "arm", "condition", "repetition", "page", "server_cc")
"""Context tags that survive export (everything else in ``context`` is dropped)."""
_NET_ERROR = re.compile(r"^net::ERR_[A-Z0-9_]{1,60}$")
_DOMAIN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)+$")
_DEFAULT_PORT = {"http": 80, "https": 443}


def parse_allowlist(text: str) -> frozenset[str]:
    """Registrable domains, one per line (``#`` comments), or a Tranco-style ``rank,domain``
    CSV; IP addresses and non-domains are ignored (an IP never stays in clear)."""
    out: set[str] = set()
    for line in text.splitlines():
        entry = line.split("#", 1)[0].strip().lower()
        if "," in entry:
            entry = entry.rsplit(",", 1)[1].strip()
        entry = entry.strip(".")
        if not entry or not _DOMAIN.match(entry):
            continue
        try:
            ipaddress.ip_address(entry)
            continue
        except ValueError:
            out.add(entry)
    return frozenset(out)


@lru_cache(maxsize=65536)
def registrable(host: str) -> str | None:
    """eTLD+1 of a host (``en.wikipedia.org`` -> ``wikipedia.org``); None for a public suffix,
    an IP address or an empty host."""
    if not host:
        return None
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    found = _psl().privatesuffix(host)
    return str(found) if found else None


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    return PublicSuffixList()


def minute(ms: float | None) -> float | None:
    """Epoch ms floored to the minute."""
    return None if ms is None else float(int(ms // MINUTE_MS) * MINUTE_MS)


def major_version(version: str) -> str:
    """``156.0.8078.73`` -> ``156``."""
    head = version.strip().split(".", 1)[0]
    return head if head.isdigit() else "unknown"


def net_error(text: str | None) -> str | None:
    """A Chromium ``net::ERR_*`` code as is; any other text becomes ``other``."""
    if text is None:
        return None
    return text if _NET_ERROR.match(text) or text == "aborted" else "other"


@dataclass(frozen=True)
class Anonymizer:
    """Maps hosts and URLs to bundle tokens; one per bundle."""

    salt: bytes
    """Random, per bundle, never stored."""
    allow: frozenset[str] = frozenset()
    """Registrable domains that stay in clear."""
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Tokens and origins already computed (one site recurs in every request of a load)."""

    def allowed(self, host: str) -> bool:
        """The host's registrable domain (eTLD+1, Public Suffix List) is on the allowlist."""
        return bool(self.allow) and registrable(host.lower().rstrip(".")) in self.allow

    def host(self, host: str | None) -> str:
        key = "h\x00" + (host or "")
        found = self._cache.get(key)
        if found is None:
            h = (host or "").lower().rstrip(".")
            found = h if h and self.allowed(h) else \
                "anon-" + hmac.new(self.salt, h.encode(), hashlib.sha256).hexdigest()[:16]
            self._cache[key] = found
        return found

    def origin(self, url: str | None) -> str:
        """Any URL or origin -> ``scheme://host[:port]`` with the host tokenized (or in clear)."""
        text = url or ""
        head, sep, rest = text.partition("://")
        if not sep:  # data:, about:blank, garbage: not worth caching
            return self._origin(text)
        # cache by scheme://authority: the path, query and fragment never matter
        cut = min((i for i in (rest.find(c) for c in "/?#\\") if i >= 0), default=len(rest))
        text = f"{head}://{rest[:cut]}"
        key = "o\x00" + text
        found = self._cache.get(key)
        if found is None:
            found = self._origin(text)
            self._cache[key] = found
        return found

    def _origin(self, url: str) -> str:
        try:
            parts = urlsplit(url or "")
            host, port = parts.hostname or "", parts.port
        except ValueError:
            return "other://" + self.host("")
        scheme = parts.scheme.lower() if parts.scheme.lower() in ("http", "https", "wss", "ws") \
            else "other"
        suffix = f":{port}" if port is not None and port != _DEFAULT_PORT.get(scheme) else ""
        return f"{scheme}://{self.host(host)}{suffix}"

    def tag(self, value: Any) -> Any:
        """A tag stays, except one that is a URL (a real-site campaign's ``page``)."""
        if isinstance(value, str) and "://" in value:
            return self.origin(value)
        return value

    def navigation(self, row: Mapping[str, Any]) -> dict[str, Any]:
        origin = self.origin(row["origin"])
        tags = {k: self.tag(row.get(k)) for k in TAGS}
        redirects = [self.origin(u) for u in json.loads(row.get("redirects") or "[]")]
        return {
            "id": row["id"], "schema": row["schema"], "source": row["source"],
            "url": origin, "origin": origin, "url_detail": "origin",
            "started_at_ms": minute(row["started_at_ms"]),
            "browser_name": row["browser_name"],
            "browser_version": major_version(row["browser_version"]),
            "extension_version": row["extension_version"],
            "network_effective_type": row.get("network_effective_type"),
            "network_rtt_ms": row.get("network_rtt_ms"),
            "network_downlink_mbps": row.get("network_downlink_mbps"),
            "warm": row["warm"], "redirects": json.dumps(redirects),
            "aborted": row["aborted"], "error": net_error(row.get("error")),
            "ttfb_ms": row.get("ttfb_ms"), "fcp_ms": row.get("fcp_ms"),
            "lcp_ms": row.get("lcp_ms"), "dcl_ms": row.get("dcl_ms"),
            "load_ms": row.get("load_ms"), "first_image_ms": row.get("first_image_ms"),
            "failed": row["failed"], "failure": net_error(row.get("failure")),
            **tags,
            "context": json.dumps({k: v for k, v in tags.items() if v is not None},
                                  sort_keys=True),
            "ingested_at_ms": minute(row["ingested_at_ms"]),
            "late_attach": row.get("late_attach"),
        }

    def request(self, row: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: row.get(k) for k in REQUEST_KEEP}
        out["url"] = self.origin(row["url"])
        out["host"] = self.host(row["host"])
        out["failure"] = net_error(row.get("failure"))
        return out

    def connection(self, row: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: row.get(k) for k in CONNECTION_KEEP}
        out["host"] = self.host(row["host"])
        return out

    def host_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {"navigation_id": row["navigation_id"], "host": self.host(row["host"]),
                "connections": row["connections"], "families": row["families"]}

    def table(self, name: str, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        fn = {"navigations": self.navigation, "requests": self.request,
              "connections": self.connection, "hosts": self.host_row}[name]
        return [fn(r) for r in rows]


REQUEST_KEEP = ("navigation_id", "seq", "request_id", "url", "host", "resource_type", "method",
                "status", "mime_type", "protocol", "family", "connection_id",
                "connection_reused", "remote_port", "encoded_bytes", "body_bytes",
                "from_disk_cache", "from_memory_cache", "from_service_worker", "priority",
                "alternate_protocol_usage", "start_ms", "first_byte_ms", "end_ms", "failed",
                "failure", "is_main_document")
"""``requests`` columns in a bundle: all but ``remote_ip`` and ``frame_id``."""
CONNECTION_KEEP = ("navigation_id", "connection_id", "upstream", "host", "family",
                   "remote_port", "requests", "bytes", "share", "first_ms", "last_ms")
"""``connections`` columns in a bundle: all but ``remote_ip``."""
