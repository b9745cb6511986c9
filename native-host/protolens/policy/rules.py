"""Policy rules: DOMAIN (exact host, ``*.example.com``, or a registrable domain) -> ARM (pure).

A DOMAIN that is its own registrable domain (eTLD+1 per the Public Suffix List: ``example.com``,
``bbc.co.uk``, ``a.test``) matches itself and every subdomain; a longer name (``www.example.com``)
matches exactly that host; ``*.example.com`` matches every subdomain but not ``example.com``.
The most specific rule wins: exact host, then the wildcard with the longest suffix, then the
registrable domain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from protolens.arms import MAX_PARALLEL, POLICY_ARMS, Arm, ArmError, is_parallel
from protolens.arms import parse_arm as parse_any_arm
from protolens.domains import registrable

ARM_NAMES = POLICY_ARMS

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")

Kind = Literal["exact", "wildcard", "registrable"]


class PolicyError(ValueError):
    """An invalid or conflicting rule; the message is one line naming the problem."""


def parse_arm(text: str) -> Arm:
    """``h1``, ``h2``, ``h2-parallel:N`` (N from 1 to 8), ``h3``, ``no-h3`` or ``default``, in
    any case."""
    t = text.strip().lower()
    try:
        arm: Arm | None = parse_any_arm(t)
    except ArmError:
        arm = None
    if arm is not None and arm.policy:
        return arm
    if is_parallel(t):
        raise PolicyError(f"arm {text!r}: N in h2-parallel:N must be a whole number from 1 "
                          f"to {MAX_PARALLEL}")
    raise PolicyError(f"unknown arm {text!r}: expected one of {', '.join(ARM_NAMES)}")


def parse_domain(text: str) -> tuple[str, Kind]:
    """Normalize DOMAIN and say how it matches; raise ``PolicyError`` if it is not a domain."""
    raw = text.strip().lower().rstrip(".")
    if not raw:
        raise PolicyError("empty domain")
    if "://" in raw or "/" in raw or ":" in raw:
        raise PolicyError(f"domain {text!r}: give a host name, not a URL or host:port")
    wildcard = raw.startswith("*.")
    name = raw[2:] if wildcard else raw
    labels = name.split(".")
    if "*" in name:
        raise PolicyError(f"domain {text!r}: '*' is allowed only as the whole first label "
                          "(*.example.com)")
    if not all(_LABEL.match(label) for label in labels):
        raise PolicyError(f"domain {text!r}: not a valid host name")
    if all(label.isdigit() for label in labels):
        raise PolicyError(f"domain {text!r}: IP addresses are not domains")
    domain = registrable(name)
    if domain is None:
        raise PolicyError(f"domain {text!r} is a public suffix: a rule would cover unrelated "
                          "sites; name a registrable domain under it")
    if wildcard:
        return f"*.{name}", "wildcard"
    return name, ("registrable" if name == domain else "exact")


@dataclass(frozen=True)
class Rule:
    """One stored policy: a domain pattern, an arm, and optional per-domain shaping."""

    domain: str
    """Normalized pattern (``a.test``, ``www.example.com``, ``*.example.com``)."""
    kind: Kind
    arm: Arm
    latency_ms: float | None = None
    """Extra per-domain latency (CDP ``emulateNetworkConditionsByRule``)."""
    throughput_kbps: float | None = None
    """Per-domain throughput cap, kilobits per second."""

    def matches(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if self.kind == "exact":
            return host == self.domain
        if self.kind == "wildcard":
            return host.endswith(self.domain[1:])
        return host == self.domain or host.endswith("." + self.domain)

    def specificity(self) -> tuple[int, int]:
        """Sort key: higher wins (exact > wildcard > registrable, then longer suffix)."""
        rank = {"exact": 2, "wildcard": 1, "registrable": 0}[self.kind]
        return rank, len(self.domain)

    def as_dict(self) -> dict[str, object]:
        return {"domain": self.domain, "kind": self.kind, "arm": str(self.arm),
                "latency_ms": self.latency_ms, "throughput_kbps": self.throughput_kbps}


def make_rule(domain: str, arm: str, latency_ms: float | None = None,
              throughput_kbps: float | None = None) -> Rule:
    """Validate and build a rule."""
    pattern, kind = parse_domain(domain)
    if latency_ms is not None and not 0 <= latency_ms <= 60_000:
        raise PolicyError(f"latency {latency_ms} ms: must be between 0 and 60000")
    if throughput_kbps is not None and not 0 < throughput_kbps <= 10_000_000:
        raise PolicyError(f"throughput {throughput_kbps} kbit/s: must be above 0 and at most "
                          "10000000")
    return Rule(pattern, kind, parse_arm(arm), latency_ms, throughput_kbps)


def match(rules: Iterable[Rule], host: str) -> Rule | None:
    """The most specific rule covering ``host``, or None."""
    best: Rule | None = None
    for rule in rules:
        if rule.matches(host) and (best is None or rule.specificity() > best.specificity()):
            best = rule
    return best


def conflict(existing: Sequence[Rule], new: Rule) -> str | None:
    """Why ``new`` cannot be added next to ``existing`` (one line), or None.

    The same pattern can have one rule only; replacing needs ``policy remove`` first (or
    ``--replace``), so a typo never silently changes a stored policy.
    """
    for rule in existing:
        if rule.domain == new.domain:
            if rule == new:
                return f"{new.domain} already has this rule ({rule.arm})"
            return (f"{new.domain} already has a rule ({rule.arm}); remove it first "
                    f"(protolens policy remove {new.domain}) or pass --replace")
    return None


def check_set(rules: Sequence[Rule]) -> None:
    """Raise ``PolicyError`` if a set of rules (e.g. a policy file) names a pattern twice."""
    seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.domain in seen:
            raise PolicyError(f"{rule.domain} has two rules ({seen[rule.domain].arm} and "
                              f"{rule.arm}): keep one")
        seen[rule.domain] = rule
