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
from protolens.policy.rules import PolicyError, make_rule, match


def arm_rules(arm: Arm, hosts: Sequence[str], policy: Sequence[Mapping[str, Any]]
              ) -> list[dict[str, Any]]:
    """The proxy rules of a load (as the proxy's ``configure`` message carries them):
    ``policy`` for the policy arm, else the arm's upstream on every host."""
    if arm.name == "policy":
        return [dict(r) for r in policy]
    return [{"domain": h, "arm": str(arm.upstream)} for h in dict.fromkeys(hosts)]


def load_rules(arm: Arm, hosts: Sequence[str], policy: Sequence[Mapping[str, Any]],
               real_sites: bool) -> tuple[list[dict[str, Any]], str | None]:
    """What the proxy is configured with for a load: its rules, and the arm for hosts no rule
    names. On real sites a page's hosts are known only after its load, so an arm other than
    ``policy`` is that every-host arm instead of one rule per host."""
    if real_sites and arm.name != "policy":
        return [], str(arm.upstream)
    return arm_rules(arm, hosts, policy), None


def every_host_rules(hosts: Sequence[str], arm: str) -> list[dict[str, Any]]:
    """The rules the proxy applied under an every-host arm: one per host a rule can name (an
    address or a public suffix cannot, and was tunnelled: ``proxy.core.with_every_host``)."""
    out = []
    for h in dict.fromkeys(hosts):
        try:
            make_rule(h, arm)
        except PolicyError:
            continue
        out.append({"domain": h, "arm": arm})
    return out


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
