"""Frozen dataclasses mirroring docs/RECORD.md field for field (schema 1).

Times are milliseconds from navigation start unless the name says otherwise; byte counts are
integers; ``None`` means unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protolens.record.enums import (  # noqa: F401  (re-exported: the record's value sets)
    FAMILIES,
    LATE_ATTACH,
    SCHEMA_VERSION,
    SOURCES,
    URL_DETAILS,
)


@dataclass(frozen=True)
class Browser:
    name: str
    """Browser product name, e.g. ``Chromium``."""
    version: str
    """Full browser version string."""


@dataclass(frozen=True)
class NetworkInfo:
    effective_type: str | None
    """``navigator.connection.effectiveType`` (``4g`` ...)."""
    rtt_ms: float | None
    """Browser-estimated round-trip time in ms."""
    downlink_mbps: float | None
    """Browser-estimated downlink in Mbit/s."""


@dataclass(frozen=True)
class Page:
    url: str
    """Page URL at the chosen ``url_detail``."""
    origin: str
    """Always the page's origin."""
    url_detail: str
    """``origin`` | ``path`` | ``full``: how much of URLs was kept."""
    started_at_ms: float
    """Wall-clock epoch milliseconds of the main request."""
    browser: Browser
    """Browser that made the load."""
    extension_version: str
    """Version of the recording extension."""
    network: NetworkInfo | None
    """Browser's network estimate, if any."""
    warm: bool
    """Main document reused a connection or any response came from cache."""
    redirects: tuple[str, ...]
    """URLs before the final one, in order."""
    aborted: bool
    """Navigation replaced or tab closed before load."""
    error: str | None
    """Main document failure (``net::ERR_...``) or ``None``."""
    late_attach: str | None = None
    """``None`` if the main document was seen from its request; ``response`` or ``commit`` if
    the extension attached while the navigation was under way (docs/RECORD.md, "Late attach")."""
    kind: str | None = None
    """``navigation`` | ``soft`` | ``bfcache`` | ``prerender`` (docs/RECORD.md "Kinds"); None in
    older records."""
    incomplete: bool | None = None
    """Something of the load is missing or was cut (``incomplete_reasons``); None in older
    records."""
    incomplete_reasons: tuple[str, ...] | None = None
    """Why it is incomplete (docs/RECORD.md "Incomplete records")."""
    open_at_end: int | None = None
    """Requests still open when the record ended (long-lived streams included)."""
    downloads: int | None = None
    """Downloads the page started while it was recorded."""
    not_seen: tuple[str, ...] | None = None
    """What DevTools could not show of this load (``service_worker_fetches`` ...)."""


@dataclass(frozen=True)
class Milestones:
    ttfb_ms: float | None
    """Main document's first response byte."""
    fcp_ms: float | None
    """First contentful paint."""
    lcp_ms: float | None
    """Largest contentful paint."""
    dcl_ms: float | None
    """DOMContentLoaded."""
    load_ms: float | None
    """Load event end: the page load time (PLT)."""
    first_image_ms: float | None
    """End of the first image response fully loaded."""
    first_visual_change_ms: float | None = None
    """First painted frame that differs from the screen at navigation start (visual metrics:
    docs/RECORD.md "Visual metrics"; None when not captured or nothing changed)."""
    speed_index_ms: float | None = None
    """SpeedIndex: the integral of (1 - visual progress) from navigation start."""
    visual_complete_85_ms: float | None = None
    """First frame at least 85% visually complete."""
    visual_complete_99_ms: float | None = None
    """First frame at least 99% visually complete."""
    last_visual_change_ms: float | None = None
    """Last painted frame that differs from the one before it."""


@dataclass(frozen=True)
class Request:
    request_id: str
    """CDP requestId + ``:`` + redirect hop index, unique in the record."""
    url: str
    """Request URL at the record's detail."""
    host: str
    """Host name of the URL."""
    resource_type: str
    """CDP ``Network.ResourceType``."""
    method: str
    """HTTP method."""
    status: int | None
    """HTTP status code."""
    mime_type: str | None
    """Response MIME type."""
    protocol: str | None
    """Raw CDP ``Response.protocol`` string."""
    family: str | None
    """Normalized protocol family: ``h1`` | ``h2`` | ``h3``."""
    connection_id: int | None
    """CDP ``Response.connectionId``; ``None`` for cache hits."""
    connection_reused: bool | None
    """CDP ``Response.connectionReused``."""
    remote_ip: str | None
    """Remote IP address."""
    remote_port: int | None
    """Remote port."""
    encoded_bytes: int
    """Wire bytes incl. headers (``Network.loadingFinished.encodedDataLength``)."""
    body_bytes: int
    """Decoded body bytes (sum of ``Network.dataReceived.dataLength``)."""
    from_disk_cache: bool
    """Served from the disk cache."""
    from_memory_cache: bool
    """Served from the memory cache."""
    from_service_worker: bool
    """Served by a service worker."""
    priority: str | None
    """CDP resource priority."""
    alternate_protocol_usage: str | None
    """CDP ``Response.alternateProtocolUsage``: why HTTP/3 was or was not used."""
    start_ms: float
    """Request start."""
    first_byte_ms: float | None
    """First response byte."""
    end_ms: float | None
    """Loading finished or failed."""
    failed: bool
    """``Network.loadingFailed`` was seen."""
    failure: str | None
    """Failure reason (``net::ERR_...``)."""
    frame_id: str | None
    """CDP frame id."""
    is_main_document: bool
    """The navigation's main document request."""
    dns_ms: float | None = None
    """DNS lookup (CDP ``Response.timing``; None when it did not happen or is unknown)."""
    connect_ms: float | None = None
    """Connection set-up: TCP + TLS, or the QUIC handshake (includes ``tls_ms``)."""
    tls_ms: float | None = None
    """TLS handshake (QUIC: the whole handshake)."""
    send_ms: float | None = None
    """Sending the request."""
    wait_ms: float | None = None
    """From the request sent to the first response byte."""
    receive_ms: float | None = None
    """From the response headers to the request's end."""


@dataclass(frozen=True)
class Connection:
    connection_id: int
    """CDP connection id (internal number, unique within the record)."""
    host: str
    """Host the connection served."""
    family: str | None
    """Protocol family carried."""
    remote_ip: str | None
    """Remote IP address."""
    remote_port: int | None
    """Remote port."""
    requests: int
    """Requests carried."""
    bytes: int
    """Sum of ``encoded_bytes`` of its requests."""
    share: float
    """``bytes`` / total bytes of all connections, in [0, 1]."""
    first_ms: float | None
    """Start of its first request."""
    last_ms: float | None
    """End of its last request."""
    upstream: bool
    """Reported by the protocol-translating proxy rather than the browser."""
    setup_ms: float | None = None
    """Its set-up, ``dns_ms`` + ``connect_ms``, from the request that opened it."""
    dns_ms: float | None = None
    """DNS lookup of its opening request."""
    connect_ms: float | None = None
    """TCP + TLS, or the QUIC handshake (includes ``tls_ms``)."""
    tls_ms: float | None = None
    """TLS handshake (QUIC: the whole handshake)."""


@dataclass(frozen=True)
class HostSummary:
    host: str
    """Host name."""
    connections: int
    """Distinct connections to it."""
    families: tuple[str, ...]
    """Protocol families seen for it."""


@dataclass(frozen=True)
class AppliedPolicy:
    """The policy that applied to one host of the load, and how (docs/POLICY.md, mechanisms)."""

    host: str
    """Host name."""
    rule: str | None
    """The matching rule's pattern, None when no rule matched."""
    arm: str
    """The arm applied (``default`` without a rule)."""
    mechanism: str
    """``relay``, ``none``, ``unsupported`` ...; ``+cdp-throttling`` appended when shaping
    applied."""
    rule_ids: tuple[str, ...]
    """CDP throttling rule ids Chromium reported as applied to this host's requests
    (``Network.requestWillBeSentExtraInfo.appliedNetworkConditionsId``)."""


@dataclass(frozen=True)
class Experiment:
    """A real-user A/B experiment's assignment for this navigation (source ``experiment``)."""

    name: str
    """Experiment name."""
    arm: str
    """Arm assigned to this navigation (``default``, ``no-h3`` ...)."""


@dataclass(frozen=True)
class NavigationRecord:
    schema: int
    """Record schema version."""
    id: str
    """UUID; the idempotency key."""
    source: str
    """``passive`` | ``lab`` | ``experiment``."""
    page: Page
    """The page and its load."""
    milestones: Milestones
    """Page-level timings."""
    requests: tuple[Request, ...]
    """Every request of the load."""
    connections: tuple[Connection, ...]
    """One per connection that carried a request."""
    hosts: tuple[HostSummary, ...]
    """Per-host summary."""
    context: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    """Free-form tags set by the host (campaign, arm, ...)."""
    policies: tuple[AppliedPolicy, ...] = ()
    """Per host: the policy and mechanism that applied (optional; everyday-browser policies)."""
    experiment: Experiment | None = None
    """The A/B assignment when ``source`` is ``experiment``."""
