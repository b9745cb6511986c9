"""The arm grammar, parsed and described in one place (pure; imports nothing of the package).

An arm names how a load's protocol is chosen: ``h1``, ``h2``, ``h3`` force a stock browser
(docs/ARCHITECTURE.md, protocol table); ``h2-parallel:N`` (N 1-8) and ``proxy-h1|h2|h3`` go
through the protocol-translating lab proxy on every host, ``policy`` per domain from a policy
file (issue 6); ``no-h3`` and ``default`` are policy arms too. ``policy/rules.py`` (rules),
``browser/flags.py`` (lab launches), ``lab/proxied.py`` (proxy rules of a load) and
``share/tags.py`` (which tags leave a bundle in clear) all read arms through this module.
"""

from __future__ import annotations

BASE_ARMS = ("h1", "h2", "h3")
"""The protocol arms a stock browser can be forced into."""
PROXY_ARMS = ("h2-parallel:N", "proxy-h1", "proxy-h2", "proxy-h3", "policy")
"""Arms applied by the lab proxy."""
POLICY_ARMS = ("h1", "h2", "h2-parallel:N", "h3", "no-h3", "default")
"""Arms a policy rule may ask for (``policy/rules.py``)."""
MAX_PARALLEL = 8
"""IFIP'18 used 2 connections; Chromium opens at most 6 per host for h1; 8 bounds the load a
policy can put on a server (ProtoLens's choice)."""
PARALLEL = "h2-parallel"
_PROXIED_NAMES = frozenset({"proxy-h1", "proxy-h2", "proxy-h3", "policy"})
_NAMES = frozenset({*BASE_ARMS, *_PROXIED_NAMES, "no-h3", "default"})
"""Every arm but ``h2-parallel:N`` (the lists above hold that one as a pattern)."""


def parallel_connections(arm: str) -> int | None:
    """N for ``h2-parallel:N`` with N a whole number from 1 to ``MAX_PARALLEL``; None for any
    other text (including an ``h2-parallel:`` with a bad N)."""
    prefix, sep, n = arm.partition(":")
    if prefix != PARALLEL or not sep or not (n.isascii() and n.isdigit()):
        return None
    return int(n) if 1 <= int(n) <= MAX_PARALLEL else None


def is_parallel(arm: str) -> bool:
    """Text that starts like ``h2-parallel:``, valid or not (to word an error)."""
    return arm.startswith(PARALLEL + ":")


def is_proxied(arm: str) -> bool:
    """True for an arm the lab proxy applies (``PROXY_ARMS``)."""
    return arm in _PROXIED_NAMES or parallel_connections(arm) is not None


def is_known(arm: str) -> bool:
    """Any arm of the lab or of policies."""
    return arm in _NAMES or parallel_connections(arm) is not None


def upstream_rule_arm(arm: str) -> str:
    """The per-host proxy rule's arm for a whole-page proxied arm: ``proxy-h2`` -> ``h2``,
    ``h2-parallel:N`` unchanged."""
    return arm.removeprefix("proxy-")


def known_arms() -> str:
    """The lab's arms, for an error message."""
    return ", ".join((*BASE_ARMS, *PROXY_ARMS))
