"""The PAC script that routes ``no-h3`` hosts through the local CONNECT relay (pure).

Chromium never uses QUIC through an HTTP proxy (docs/ARCHITECTURE.md, verified), so a host the
script sends to the relay stays on HTTP/2 or HTTP/1.1. A host goes to the relay when its most
specific rule (``rules.match``) is ``no-h3``: the same hosts the relay itself accepts
(``host/relay.py``). The extension's ``src/policy/rules.ts`` ``pacScript`` writes the same script;
both answer every case of tests/cases/pac.json (docs/ARCHITECTURE.md, "The no-h3 PAC script").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from protolens.policy.rules import Rule

_SAFE_DOMAIN = re.compile(r"(\*\.)?[a-z0-9.-]+")
"""Rules are validated where they are made; checked again because they become script source."""


def _test(rule: Rule) -> str:
    d = rule.domain
    if rule.kind == "exact":
        return f'h == "{d}"'
    if rule.kind == "wildcard":
        return f'dnsDomainIs(h, "{d[1:]}")'
    return f'(h == "{d}" || dnsDomainIs(h, ".{d}"))'


def pac_script(port: int | None, rules: Sequence[Rule]) -> str:
    """``FindProxyForURL``: ``PROXY 127.0.0.1:port`` for a host whose most specific rule is
    ``no-h3``, ``DIRECT`` for every other host, and for all of them without a relay (``port``
    None)."""
    relay = None if port is None else f'"PROXY 127.0.0.1:{port}"'
    ordered = [] if relay is None else sorted(
        (r for r in rules if _SAFE_DOMAIN.fullmatch(r.domain)),
        key=Rule.specificity, reverse=True)
    direct = '"DIRECT"'
    lines = "".join(f"  if ({_test(r)}) return {relay if r.arm.name == 'no-h3' else direct};\n"
                    for r in ordered)
    # a fully qualified name ("a.test.") matches as without the dot, as in Rule.matches
    return ("function FindProxyForURL(url, host) {\n"
            '  var h = host.toLowerCase().replace(/\\.$/, "");\n'
            f'{lines}  return "DIRECT";\n}}\n')
