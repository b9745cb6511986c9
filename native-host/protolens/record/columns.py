"""The stored columns of a NavigationRecord: one declarative table.

Pure data, the lowest layer next to ``record/enums.py`` (it imports nothing from ``store/``,
``share/`` or ``messaging/``). Everything else is derived from it:

- ``store/ingest.py``: the column lists and ``INSERT`` statements;
- ``record/validate.py``: type, range, enum and length checks of every field a record carries;
- ``share/bundle.py``: the Arrow schema of each bundle version and the value checks at ``merge``;
- ``share/anonymize.py``: what export does with each column (``keep``, ``pseudonymize``,
  ``coarsen``, ``drop``; ``how`` names the anonymizer's rule);
- ``schema/navigation-record.schema.json`` (``scripts/gen_record_schema.py``);
- the tests: ``PRAGMA table_info`` after all migrations equals this table, every column has an
  export action, the bundle schema equals the derived one.

Limits (``max_len``, ``min``/``max``) and where each comes from are in docs/RECORD.md "Limits".

How to add a stored record field now: (1) the field in ``src/record/types.ts`` and the recorder
that fills it, (2) the attribute in ``record/model.py``, (3) one ``Column`` below (with its record
``field`` path, limits and export action; a new exported column gets ``since`` = a new
``BUNDLE_SCHEMA``), (4) a migration adding the column, (5) regenerate the JSON Schema
(``.venv/bin/python scripts/gen_record_schema.py``) and document it in docs/RECORD.md and
docs/SCHEMA.md. Ingest, validation, export, bundles and merge follow from the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from protolens.record.enums import (
    FAMILIES,
    INCOMPLETE_REASONS,
    LATE_ATTACH,
    NOT_SEEN,
    PAGE_KINDS,
    SCHEMA_VERSION,
    SOURCES,
    URL_DETAILS,
)

Action = Literal["keep", "pseudonymize", "coarsen", "drop"]
ACTIONS: tuple[Action, ...] = ("keep", "pseudonymize", "coarsen", "drop")
ARROW_TYPES = {"TEXT": "string", "INTEGER": "int64", "REAL": "float64"}
"""Arrow type of each SQL storage class (bundles are Parquet files of these)."""

BUNDLE_SCHEMA = 5
"""Version of the bundle tables ``export`` writes: 2 added ``navigations.late_attach``, 3 dropped
``remote_port`` (no ports leave the machine: docs/RESEARCH.md), 4 added the visual metrics
(``VISUAL_MILESTONES``), 5 the record's kind, its completeness, what DevTools could not see,
request phases and connection set-up (``REAL_WEB``)."""
VISUAL_MILESTONES = ("first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms",
                     "visual_complete_99_ms", "last_visual_change_ms")
"""Milestones from the tab's painted frames (docs/RECORD.md "Visual metrics"), stored like the
other milestones; records from before them lack them."""

# --- limits (sources in docs/RECORD.md "Limits") ---------------------------------------------
MAX_COUNT = 2 ** 53
"""Largest count or id: JavaScript's exact integers end at 2^53 (the extension's numbers), and
SQLite's INTEGER at 2^63 - 1 (an OverflowError beyond)."""
URL_MAX = 2 * 1024 * 1024
"""Chromium's ``url::kMaxURLChars`` (2 MiB): a longer URL is not navigable."""
HOST_MAX = 253
"""A DNS name's text form (RFC 1035 2.3.4: 255 octets on the wire)."""
ORIGIN_MAX = 512
"""scheme (Chromium's are under 32) + ``://`` + host (253) + ``:`` + port (5), rounded up."""
TOKEN_MAX = 64
"""Protocol tokens (method, protocol, priority, resource type, CDP enums, versions)."""
MAX_REDIRECTS = 20
"""Chromium's ``net::URLRequest`` redirect limit (``kMaxRedirects`` = 20)."""
MAX_ITEMS = 20_000
"""Requests, connections, hosts or policies in one record: the largest lab page has 5,000
objects (``pages/catalog.py`` ``MAX_CUSTOM_OBJECTS``), real pages a few hundred."""
CONTEXT_MAX = 64 * 1024
"""JSON text of a record's ``context`` (tags and a lab command line)."""
EPOCH_MS = (946_684_800_000.0, 4_102_444_800_000.0)
"""Wall-clock times: 2000-01-01 .. 2100-01-01 UTC."""
DAY_MS = 86_400_000.0
"""Times from navigation start: a record completes seconds after its load event."""
SHARE_EPSILON = 1e-9
"""Float slack when a navigation's connection shares are summed (each is bytes / total)."""


@dataclass(frozen=True)
class Column:
    """One stored column."""

    table: str
    name: str
    sql: str
    """SQLite storage class: ``TEXT``, ``INTEGER`` or ``REAL`` (tables are STRICT)."""
    required: bool
    """NOT NULL in the store; not null in the record."""
    export: Action
    """What ``export`` does with it (share/anonymize.py)."""
    how: str = ""
    """The anonymizer's rule for ``pseudonymize`` / ``coarsen`` (e.g. ``host``, ``minute``)."""
    field: str | None = None
    """Where a record carries it (``page.browser.name``, ``requests.status``); None when the host
    fills it (sequence numbers, tags, times of ingest, provenance)."""
    enum: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    max_len: int | None = None
    """Longest text, in characters."""
    flag: bool = False
    """A boolean, stored as 0/1."""
    context: bool = False
    """Filled from the context key of the same name (lab tags the host stamps)."""
    optional: bool = False
    """May be absent from a record (added after schema 1 shipped; absent means null)."""
    since: int = 1
    """Bundle schema that first carried it."""
    until: int | None = None
    """Last bundle schema that carried it (a column export stopped sharing)."""

    @property
    def arrow(self) -> str:
        return ARROW_TYPES[self.sql]

    @property
    def key(self) -> str:
        """The field's name inside its record object (``page.browser.name`` -> ``name``)."""
        return (self.field or self.name).rsplit(".", 1)[-1]

    def in_bundle(self, version: int) -> bool:
        """Carried by bundles of schema ``version``."""
        if self.export == "drop" and self.until is None:
            return False
        return self.since <= version and (self.until is None or version <= self.until)


def _t(table: str, name: str, sql: str, required: bool = False, export: Action = "keep",
       **kw: Any) -> Column:
    return Column(table, name, sql, required, export, **kw)


def _nav(name: str, sql: str, required: bool = False, export: Action = "keep", *,
         field: str | None = "", **kw: Any) -> Column:
    return _t("navigations", name, sql, required, export,
              field=("page." + name if field == "" else field), **kw)


_ID: dict[str, Any] = {"max_len": 45}
"""A record id: canonical UUIDs have 36 characters; stores from before ids were canonicalized
may hold ``urn:uuid:`` forms (45)."""
_COUNT: dict[str, Any] = {"min": 0, "max": MAX_COUNT}
_MS: dict[str, Any] = {"min": -DAY_MS, "max": DAY_MS}
_MILESTONE: dict[str, Any] = {"min": 0, "max": DAY_MS}
_EPOCH: dict[str, Any] = {"min": EPOCH_MS[0], "max": EPOCH_MS[1]}
_PORT: dict[str, Any] = {"min": 1, "max": 65535}
_TOKEN: dict[str, Any] = {"max_len": TOKEN_MAX}
_TAG: dict[str, Any] = {"max_len": 1024}
_PHASE: dict[str, Any] = {"min": 0, "max": DAY_MS}
REQUEST_PHASES = ("dns_ms", "connect_ms", "tls_ms", "send_ms", "wait_ms", "receive_ms")
"""A request's phases (CDP ``Response.timing``, as HAR's ``timings``; docs/RECORD.md "Timings")."""
CONNECTION_SETUP = ("setup_ms", "dns_ms", "connect_ms", "tls_ms")
"""A connection's set-up, from the request that opened it."""
LIST_FIELDS = {"incomplete_reasons": INCOMPLETE_REASONS, "not_seen": NOT_SEEN}
"""``page`` fields that are lists of tokens, stored as JSON text, with their allowed items."""

NAVIGATIONS: tuple[Column, ...] = (
    _nav("id", "TEXT", True, field="id", **_ID),
    _nav("schema", "INTEGER", True, field="schema", min=SCHEMA_VERSION, max=SCHEMA_VERSION),
    _nav("source", "TEXT", True, field="source", enum=SOURCES),
    _nav("url", "TEXT", True, "pseudonymize", how="origin", max_len=URL_MAX),
    _nav("origin", "TEXT", True, "pseudonymize", how="origin", max_len=ORIGIN_MAX),
    _nav("url_detail", "TEXT", True, "coarsen", how="origin_detail", enum=URL_DETAILS),
    _nav("started_at_ms", "REAL", True, "coarsen", how="minute", **_EPOCH),
    _nav("browser_name", "TEXT", True, field="page.browser.name", **_TOKEN),
    _nav("browser_version", "TEXT", True, "coarsen", how="major_version",
         field="page.browser.version", **_TOKEN),
    _nav("extension_version", "TEXT", True, **_TOKEN),
    _nav("network_effective_type", "TEXT", field="page.network.effective_type", max_len=16),
    _nav("network_rtt_ms", "REAL", field="page.network.rtt_ms", **_MILESTONE),
    _nav("network_downlink_mbps", "REAL", field="page.network.downlink_mbps", min=0,
         max=1e6),
    _nav("warm", "INTEGER", True, flag=True),
    _nav("redirects", "TEXT", True, "pseudonymize", how="origins",
         max_len=MAX_REDIRECTS * (URL_MAX + 4) + 2),
    _nav("aborted", "INTEGER", True, flag=True),
    _nav("error", "TEXT", False, "coarsen", how="net_error", max_len=256),
    *(_nav(m, "REAL", field="milestones." + m, **_MILESTONE)
      for m in ("ttfb_ms", "fcp_ms", "lcp_ms", "dcl_ms", "load_ms", "first_image_ms")),
    _nav("failed", "INTEGER", True, field=None, flag=True),
    _nav("failure", "TEXT", False, "coarsen", how="net_error", field=None, max_len=256),
    _nav("campaign", "TEXT", False, "pseudonymize", how="tag", field=None, context=True,
         **_TAG),
    _nav("arm", "TEXT", False, "pseudonymize", how="tag", field=None, context=True,
         **_TAG),
    _nav("condition", "TEXT", False, "pseudonymize", how="tag", field=None, context=True,
         **_TAG),
    _nav("repetition", "INTEGER", field=None, context=True, **_COUNT),
    _nav("page", "TEXT", False, "pseudonymize", how="tag", field=None, context=True,
         **_TAG),
    _nav("server_cc", "TEXT", False, "pseudonymize", how="tag", field=None, context=True,
         **_TAG),
    _nav("command_line", "TEXT", False, "drop", field=None, context=True,
         max_len=CONTEXT_MAX),
    _nav("load_id", "TEXT", False, "drop", field=None, context=True, **_TAG),
    _nav("context", "TEXT", True, "coarsen", how="tags_json", field=None, max_len=CONTEXT_MAX),
    _nav("ingested_at_ms", "REAL", True, "coarsen", how="minute", field=None, **_EPOCH),
    _nav("bundle", "INTEGER", False, "drop", field=None, **_COUNT),
    _nav("late_attach", "TEXT", enum=LATE_ATTACH, optional=True, since=2),
    *(_nav(m, "REAL", field="milestones." + m, optional=True, since=4, **_MILESTONE)
      for m in VISUAL_MILESTONES),
    _nav("kind", "TEXT", enum=PAGE_KINDS, optional=True, since=5),
    _nav("incomplete", "INTEGER", flag=True, optional=True, since=5),
    _nav("incomplete_reasons", "TEXT", optional=True, since=5, max_len=256),
    _nav("open_at_end", "INTEGER", optional=True, since=5, **_COUNT),
    _nav("downloads", "INTEGER", optional=True, since=5, **_COUNT),
    _nav("not_seen", "TEXT", optional=True, since=5, max_len=256),
)
"""``navigations``, in the store's column order (``bundle`` came with m005, ``late_attach``
with m008, the visual milestones with m012, ``kind`` .. ``not_seen`` with m013)."""


def _req(name: str, sql: str, required: bool = False, export: Action = "keep", *,
         host: bool = False, **kw: Any) -> Column:
    field = None if host else "requests." + name
    return _t("requests", name, sql, required, export, field=field, **kw)


REQUESTS: tuple[Column, ...] = (
    _req("navigation_id", "TEXT", True, host=True, **_ID),
    _req("seq", "INTEGER", True, host=True, **_COUNT),
    _req("request_id", "TEXT", True, "pseudonymize", how="request_id", max_len=128),
    _req("url", "TEXT", True, "pseudonymize", how="origin", max_len=URL_MAX),
    _req("host", "TEXT", True, "pseudonymize", how="host", max_len=HOST_MAX),
    _req("resource_type", "TEXT", True, **_TOKEN),
    _req("method", "TEXT", True, **_TOKEN),
    _req("status", "INTEGER", min=100, max=599),
    _req("mime_type", "TEXT", max_len=255),
    _req("protocol", "TEXT", **_TOKEN),
    _req("family", "TEXT", enum=FAMILIES),
    _req("connection_id", "INTEGER", **_COUNT),
    _req("connection_reused", "INTEGER", flag=True),
    _req("remote_ip", "TEXT", False, "drop", max_len=64),
    _req("remote_port", "INTEGER", False, "drop", until=2, **_PORT),
    _req("encoded_bytes", "INTEGER", True, **_COUNT),
    _req("body_bytes", "INTEGER", True, **_COUNT),
    _req("from_disk_cache", "INTEGER", True, flag=True),
    _req("from_memory_cache", "INTEGER", True, flag=True),
    _req("from_service_worker", "INTEGER", True, flag=True),
    _req("priority", "TEXT", **_TOKEN),
    _req("alternate_protocol_usage", "TEXT", **_TOKEN),
    _req("start_ms", "REAL", True, **_MS),
    _req("first_byte_ms", "REAL", **_MS),
    _req("end_ms", "REAL", **_MS),
    _req("failed", "INTEGER", True, flag=True),
    _req("failure", "TEXT", False, "coarsen", how="net_error", max_len=256),
    _req("frame_id", "TEXT", False, "drop", max_len=128),
    _req("is_main_document", "INTEGER", True, flag=True),
    _req("bundle", "INTEGER", False, "drop", host=True, **_COUNT),
    *(_req(m, "REAL", optional=True, since=5, **_PHASE) for m in REQUEST_PHASES),
)


def _conn(name: str, sql: str, required: bool = False, export: Action = "keep", *,
          host: bool = False, **kw: Any) -> Column:
    field = None if host else "connections." + name
    return _t("connections", name, sql, required, export, field=field, **kw)


CONNECTIONS: tuple[Column, ...] = (
    _conn("navigation_id", "TEXT", True, host=True, **_ID),
    _conn("connection_id", "INTEGER", True, **_COUNT),
    _conn("upstream", "INTEGER", True, flag=True),
    _conn("host", "TEXT", True, "pseudonymize", how="host", max_len=HOST_MAX),
    _conn("family", "TEXT", enum=FAMILIES),
    _conn("remote_ip", "TEXT", False, "drop", max_len=64),
    _conn("remote_port", "INTEGER", False, "drop", until=2, **_PORT),
    _conn("requests", "INTEGER", True, **_COUNT),
    _conn("bytes", "INTEGER", True, **_COUNT),
    _conn("share", "REAL", True, min=0, max=1),
    _conn("first_ms", "REAL", **_MS),
    _conn("last_ms", "REAL", **_MS),
    _conn("bundle", "INTEGER", False, "drop", host=True, **_COUNT),
    *(_conn(m, "REAL", optional=True, since=5, **_PHASE) for m in CONNECTION_SETUP),
)
"""Connection shares must also sum to at most 1 (+ ``SHARE_EPSILON``) per navigation and
``upstream`` value: checked by the validator and at merge."""

HOSTS: tuple[Column, ...] = (
    _t("hosts", "navigation_id", "TEXT", True, **_ID),
    _t("hosts", "host", "TEXT", True, "pseudonymize", how="host", field="hosts.host",
       max_len=HOST_MAX),
    _t("hosts", "connections", "INTEGER", True, field="hosts.connections", **_COUNT),
    _t("hosts", "families", "TEXT", True, field="hosts.families", max_len=32),
    _t("hosts", "bundle", "INTEGER", False, "drop", **_COUNT),
)

NAVIGATION_POLICIES: tuple[Column, ...] = (
    _t("navigation_policies", "navigation_id", "TEXT", True, "drop", **_ID),
    _t("navigation_policies", "host", "TEXT", True, "drop", field="policies.host",
       max_len=HOST_MAX),
    _t("navigation_policies", "rule", "TEXT", False, "drop", field="policies.rule",
       max_len=HOST_MAX + 2),
    _t("navigation_policies", "arm", "TEXT", True, "drop", field="policies.arm", **_TOKEN),
    _t("navigation_policies", "mechanism", "TEXT", True, "drop", field="policies.mechanism",
       max_len=128),
    _t("navigation_policies", "rule_ids", "TEXT", False, "drop", max_len=CONTEXT_MAX),
)
"""What applied per host (docs/POLICY.md); not exported (bundles carry no policies)."""

TABLES: dict[str, tuple[Column, ...]] = {
    "navigations": NAVIGATIONS, "requests": REQUESTS, "connections": CONNECTIONS,
    "hosts": HOSTS, "navigation_policies": NAVIGATION_POLICIES,
}
"""Every table a record is stored in, in insertion order."""
BUNDLE_TABLES = ("navigations", "requests", "connections", "hosts")
"""The tables a bundle carries, in insertion order (navigations first)."""


def column(table: str, name: str) -> Column:
    """The column ``name`` of ``table`` (KeyError if there is none)."""
    for col in TABLES[table]:
        if col.name == name:
            return col
    raise KeyError(f"{table}.{name}")


def stored(table: str) -> tuple[str, ...]:
    """Names of the columns ingest writes (all but the merge's provenance ``bundle``)."""
    return tuple(c.name for c in TABLES[table] if c.name != "bundle")


def bundled(table: str, version: int = BUNDLE_SCHEMA) -> tuple[Column, ...]:
    """The columns of ``table`` in bundles of schema ``version``, in order."""
    return tuple(c for c in TABLES[table] if c.in_bundle(version))


def record_fields(prefix: str) -> tuple[Column, ...]:
    """Columns read from the record object at ``prefix`` (``page``, ``page.browser``,
    ``requests`` ...), in column order."""
    want = prefix + "." if prefix else ""
    return tuple(c for tab in TABLES.values() for c in tab
                 if c.field and c.field.startswith(want) and "." not in c.field[len(want):])
