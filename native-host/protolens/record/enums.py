"""The closed value sets of the NavigationRecord and its stored columns, defined once.

Pure data at the bottom of the package: ``record/model.py`` re-exports them, ``record/columns.py``
attaches them to columns (and from there SQL ``CHECK`` text, validation, the bundle checks and the
JSON Schema are derived). The TypeScript twins are the union types in ``src/record/types.ts``; the
committed JSON Schema (``schema/navigation-record.schema.json``) binds the two.
"""

from __future__ import annotations

from typing import Literal

SCHEMA_VERSION = 1
"""The only NavigationRecord schema this host accepts."""

SOURCES = ("passive", "lab", "experiment")
"""``source``: everyday browsing, a lab profile, a real-user A/B experiment."""
URL_DETAILS = ("origin", "path", "full")
"""``page.url_detail``: how much of each URL was kept."""
FAMILIES = ("h1", "h2", "h3")
"""Normalized protocol families (``family`` columns, ``hosts[].families``)."""
LATE_ATTACH = ("response", "commit", "missed")
"""``page.late_attach`` when not null (docs/RECORD.md "Late attach"); ``missed``: a document
committed and left while the debugger was attaching, known from webNavigation alone."""
PAGE_KINDS = ("navigation", "soft", "bfcache", "prerender")
"""``page.kind``: a document load, a same-document navigation by the History API (a single-page
app's route change), a back/forward-cache restore, a page shown from a prerender (its activation;
docs/RECORD.md "Kinds")."""
INCOMPLETE_REASONS = ("aborted", "no_load_event", "load_event_missed", "unfinished_requests",
                      "cap_after_load", "stopped", "dialog", "hidden")
"""``page.incomplete_reasons`` items (docs/RECORD.md "Incomplete records")."""
NOT_SEEN = ("service_worker_fetches", "shared_worker_fetches", "requests_before_attach",
            "early_hints_preloads", "websocket_connections", "download_transfers")
"""``page.not_seen`` items: what DevTools could not show of a load (docs/RECORD.md)."""
SERVER_CCS = ("cubic", "cubic-nohystart", "bbr", "reno")
"""Server congestion controls a lab campaign can ask for (``--server-cc``): the ``server_cc``
tags export keeps in clear."""

IngestOutcome = Literal["stored", "duplicate", "conflict"]
"""What storing a record did: stored now; its id was stored before with the same content; or
with different content (the stored one is kept, the reply says so)."""
