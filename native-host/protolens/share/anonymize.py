"""Anonymization of store rows for a shared bundle (pure; the salt comes in from the caller).

What happens to each column is the column table's ``export`` and ``how`` (record/columns.py);
this module implements the rules (``_RULES``):

- Every URL is reduced to its origin; the host becomes ``anon-<16 hex>``, an HMAC-SHA256 of the
  host under a random per-bundle salt that is never written anywhere, unless the host's domain is
  on the user's allowlist (then the origin stays in clear; never a path or query). No port: a
  non-default one (a home server's 8443) can single a volunteer out.
- No IP addresses or ports (``remote_ip``, ``remote_port`` dropped), no CDP frame ids, request
  ids renumbered per navigation (CDP's carry the renderer's process id), no command lines, no
  free-form context: the context keeps only the tag columns, and a tag stays in clear only when
  it is one of ProtoLens's own names (share/tags.py).
- Wall-clock times are floored to the minute; the browser is reduced to name and major version.
- Error strings are kept only when they are Chromium's ``net::ERR_*`` codes.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from protolens.domains import registrable
from protolens.record.columns import Column, bundled
from protolens.share import tags

MINUTE_MS = 60_000
_NET_ERROR = re.compile(r"^net::ERR_[A-Z0-9_]{1,60}$")
_BLOCKED = re.compile(r"^blocked:[a-z-]{1,80}$")
"""A request the browser blocked before it left: CDP's ``blockedReason``, a closed list of words
(``csp``, ``mixed-content``, ``inspector``...), no page's text."""
_RECORDER_FAILURES = frozenset({"aborted", "canceled", "failed"})
"""The recorder's own words for a failure Chromium named no error for."""
_DOMAIN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)+$")


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


def minute(ms: float | None) -> float | None:
    """Epoch ms floored to the minute."""
    return None if ms is None else float(int(ms // MINUTE_MS) * MINUTE_MS)


def major_version(version: str) -> str:
    """``156.0.8078.73`` -> ``156``."""
    head = version.strip().split(".", 1)[0]
    return head if head.isdigit() else "unknown"


def net_error(text: str | None) -> str | None:
    """A Chromium ``net::ERR_*`` code, a ``blocked:<reason>`` and the recorder's own words as
    they are; any other text becomes ``other``."""
    if text is None:
        return None
    known = _NET_ERROR.match(text) or _BLOCKED.match(text) or text in _RECORDER_FAILURES
    return text if known else "other"


@dataclass(frozen=True)
class Anonymizer:
    """Maps hosts and URLs to bundle tokens; one per bundle."""

    salt: bytes
    """Random, per bundle, never stored."""
    allow: frozenset[str] = frozenset()
    """Registrable domains that stay in clear."""
    keep_campaigns: frozenset[str] = frozenset()
    """Campaign names the volunteer chose to share in clear (``export --keep-campaign``)."""
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Tokens and origins already computed (one site recurs in every request of a load)."""
    _ids: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """The current navigation's CDP request ids and their new numbers."""

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
        """Any URL or origin -> ``scheme://host`` with the host tokenized (or in clear)."""
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
            host = parts.hostname or ""
        except ValueError:
            return "other://" + self.host("")
        scheme = parts.scheme.lower() if parts.scheme.lower() in ("http", "https", "wss", "ws") \
            else "other"
        return f"{scheme}://{self.host(host)}"

    def pseudonym(self, key: str, value: str) -> str:
        """A free-text tag as ``anon-<16 hex>`` under the bundle's salt (share/tags.py)."""
        data = f"tag\x00{key}\x00{value}".encode()
        return "anon-" + hmac.new(self.salt, data, hashlib.sha256).hexdigest()[:16]

    def request_id(self, navigation_id: str, request_id: str) -> str:
        """CDP's requestId carries the renderer's process id (``<pid>.<n>``) or a loader id:
        renumbered per navigation in order of appearance, the redirect hop kept (``r3:1``).
        Rows come in (navigation, seq) order (``store.bundles.export_rows``)."""
        cdp, sep, hop = request_id.rpartition(":")
        if not sep:
            cdp, hop = request_id, "0"
        if self._ids.get("\x00navigation") != navigation_id:
            self._ids.clear()
            self._ids["\x00navigation"] = navigation_id
        number = self._ids.setdefault(cdp, str(len(self._ids)))
        return f"r{number}:{hop}"

    def table(self, name: str, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Rows of store table ``name`` as the bundle carries them: every column the table
        (record/columns.py) exports, each through its rule."""
        plan = [(c.name, _plan(c)) for c in bundled(name)]
        out = []
        for row in rows:
            done: dict[str, Any] = {}
            for col, rule in plan:
                done[col] = row.get(col) if rule is None else rule(self, row, col, done)
            out.append(done)
        return out


Rule = Callable[[Anonymizer, Mapping[str, Any], str, Mapping[str, Any]], Any]


def _plan(c: Column) -> Rule | None:
    """The rule of column ``c``; None: copy it as is. A kept nullable number outside its range
    (stored by an older ProtoLens, e.g. a status of 0) is exported as null, the value merge
    would refuse the whole bundle for (record/columns.py)."""
    if c.export != "keep":
        return _RULES[c.how]
    if c.required or c.sql == "TEXT" or c.flag or (c.min is None and c.max is None):
        return None
    lo = -math.inf if c.min is None else c.min
    hi = math.inf if c.max is None else c.max

    def in_range(a: Anonymizer, row: Mapping[str, Any], col: str, done: Mapping[str, Any]) -> Any:
        value = row.get(col)
        return value if value is None or lo <= value <= hi else None

    return in_range


def _tags_json(a: Anonymizer, row: Mapping[str, Any], col: str, done: Mapping[str, Any]) -> str:
    """The context as the tag columns already exported for this row (nothing else)."""
    tags = {c.name: done[c.name] for c in bundled("navigations") if c.context}
    return json.dumps({k: v for k, v in tags.items() if v is not None}, sort_keys=True)


_RULES: dict[str, Rule] = {
    "origin": lambda a, row, col, done: a.origin(row[col]),
    "origins": lambda a, row, col, done: json.dumps(
        [a.origin(u) for u in json.loads(row.get(col) or "[]")]),
    "origin_detail": lambda a, row, col, done: "origin",
    "host": lambda a, row, col, done: a.host(row[col]),
    "tag": lambda a, row, col, done: None if row.get(col) is None else tags.exported(
        col, row[col], a.keep_campaigns, a.pseudonym),
    "request_id": lambda a, row, col, done: a.request_id(row["navigation_id"], row[col]),
    "minute": lambda a, row, col, done: minute(row[col]),
    "major_version": lambda a, row, col, done: major_version(row[col]),
    "net_error": lambda a, row, col, done: net_error(row.get(col)),
    "tags_json": _tags_json,
}
"""What each ``how`` of record/columns.py does (a ``keep`` column is copied as is)."""
