"""Which mechanism enforces a rule (pure): the table in docs/ARCHITECTURE.md, "How each protocol
policy can be applied". Every stored navigation records it per host (``navigation_policies``).
"""

from __future__ import annotations

from dataclasses import dataclass

from protolens.arms import Arm
from protolens.policy.rules import Rule

CHROMIUM_FLAGS = "chromium-flags"
"""A whole-browser arm of a lab load (``--disable-http2``, ``--origin-to-force-quic-on``...)."""
PROXY = "proxy"
"""The protocol-translating proxy (lab profiles only): TLS terminated, upstream as the arm says."""
PROXY_TUNNEL = "proxy-tunnel"
"""Through the lab proxy unchanged (a CONNECT tunnel): no QUIC, the browser's own TLS."""
RELAY = "relay"
"""The local CONNECT relay (plain tunnel) via ``chrome.proxy``: Chromium never uses QUIC through
an HTTP proxy (verified), so a ``no-h3`` domain stays on h2/h1."""
NONE = "none"
"""Nothing applied: the browser's default."""
UNSUPPORTED = "unsupported"
"""The arm cannot be applied here (e.g. h1 per domain in an everyday browser: that would need
interception, which ProtoLens never does outside lab profiles)."""
CDP_THROTTLING = "cdp-throttling"
"""Per-domain latency/throughput: CDP ``Network.emulateNetworkConditionsByRule`` (extension)."""


@dataclass(frozen=True)
class Enforcement:
    """How a host's policy is applied."""

    rule: str | None
    """The matching rule's pattern, ``*`` for a whole-browser lab arm, None without a rule."""
    arm: str
    """The arm applied (``default`` without a rule)."""
    mechanism: str
    """One of the constants above; ``+cdp-throttling`` appended when shaping applies too."""


def lab_mechanism(arm: Arm, proxied: bool) -> str:
    """A per-domain rule in a lab profile; ``proxied``: the load goes through the lab proxy."""
    if arm.translated:
        return PROXY
    if arm.name == "no-h3":
        return PROXY_TUNNEL if proxied else RELAY
    return PROXY_TUNNEL if proxied else NONE


def browser_mechanism(arm: Arm) -> str:
    """A per-domain rule in an everyday browser (no interception, ever)."""
    if arm.name == "no-h3":
        return RELAY
    if arm.name == "default":
        return NONE
    return UNSUPPORTED


def enforcement(rule: Rule | None, *, lab: bool, proxied: bool = False) -> Enforcement:
    """How ``rule`` (None: no rule matched) is applied to a host."""
    if rule is None:
        mech = PROXY_TUNNEL if (lab and proxied) else NONE
        return Enforcement(None, "default", mech)
    mech = lab_mechanism(rule.arm, proxied) if lab else browser_mechanism(rule.arm)
    if rule.latency_ms is not None or rule.throughput_kbps is not None:
        mech = f"{mech}+{CDP_THROTTLING}"
    return Enforcement(rule.domain, str(rule.arm), mech)


def whole_browser(arm: Arm) -> Enforcement:
    """A campaign arm applied to every host with Chromium flags (h1, h2, h3)."""
    return Enforcement("*", str(arm), CHROMIUM_FLAGS)
