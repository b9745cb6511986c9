"""Lab loads through the protocol-translating proxy (docs/POLICY.md): the rules a load's arm
means, the policy and mechanism per host, and which navigation each upstream connection belongs
to (pure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protolens.arms import Arm
from protolens.policy.file import from_stored
from protolens.policy.mechanism import Enforcement, enforcement, whole_browser
from protolens.policy.rules import match


def arm_rules(arm: Arm, hosts: Sequence[str], policy: Sequence[Mapping[str, Any]]
              ) -> list[dict[str, Any]]:
    """The proxy rules of a load (as the proxy's ``configure`` message carries them):
    ``policy`` for the policy arm, else the arm's upstream on every host."""
    if arm.name == "policy":
        return [dict(r) for r in policy]
    return [{"domain": h, "arm": str(arm.upstream)} for h in dict.fromkeys(hosts)]


def applied(arm: Arm, hosts: Sequence[str], rules: Sequence[Mapping[str, Any]]
            ) -> dict[str, Enforcement]:
    """Per host of a navigation: the rule, arm and mechanism that applied."""
    if not arm.proxied:
        return {h: whole_browser(arm) for h in hosts}
    parsed = from_stored(rules) if rules else []
    return {h: enforcement(match(parsed, h), lab=True, proxied=True) for h in hosts}


def split_by_navigation(conns: Sequence[Mapping[str, Any]],
                        starts: Sequence[tuple[str, float]]) -> dict[str, list[Mapping[str, Any]]]:
    """Each upstream connection goes to the last navigation that started before its first
    request (a warm load has two navigations in one browser)."""
    out: dict[str, list[Mapping[str, Any]]] = {nav: [] for nav, _ in starts}
    if not starts:
        return out
    for c in conns:
        first = c.get("first_epoch_ms")
        owner = starts[0][0]
        for nav, start in starts:
            if first is not None and float(first) >= start:
                owner = nav
        out[owner].append(c)
    return out
