"""The arm grammar, and the ``Arm`` value every reader asks (pure; imports nothing of the package).

An arm names how a load's protocol is chosen: ``h1``, ``h2``, ``h3`` force a stock browser
(docs/ARCHITECTURE.md, protocol table); ``h2-parallel:N`` (N 1-8) and ``proxy-h1|h2|h3`` go
through the protocol-translating lab proxy on every host, ``policy`` per domain from a policy
file (docs/POLICY.md); ``no-h3`` and ``default`` are policy arms too.

Text becomes an ``Arm`` once, where it enters: the CLI and a campaign's stored spec
(``lab/campaign.py``), fairness pairs (``lab/fairness.py``), policy rules from a file, the store or
a proxy message (``policy/rules.py``). Past that edge, lab launches (``browser/flags.py``), proxy
rules (``lab/proxied.py``) and the proxy itself ask the value; ``str(arm)`` is the text stored in
SQLite and sent in messages. ``share/tags.py`` asks ``is_known`` of a tag's free text.
"""

from __future__ import annotations

from dataclasses import dataclass

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
_UPSTREAM = {"proxy-h1": "h1", "proxy-h2": "h2", "proxy-h3": "h3"}
_PROXIED = frozenset({*_UPSTREAM, "policy", PARALLEL})
_TRANSLATED = frozenset({*BASE_ARMS, PARALLEL})
_POLICY = frozenset({*BASE_ARMS, PARALLEL, "no-h3", "default"})
_NAMES = frozenset({*BASE_ARMS, *_UPSTREAM, "policy", "no-h3", "default"})
"""Every arm's name but ``h2-parallel``, the one arm with a number."""


class ArmError(ValueError):
    """Text that is not an arm (or not one this place takes); the message is one line."""


@dataclass(frozen=True)
class Arm:
    """One arm; only valid arms can be made."""

    name: str
    """``h1``, ``h2``, ``h3``, ``h2-parallel``, ``proxy-h1|h2|h3``, ``policy``, ``no-h3`` or
    ``default``."""
    connections: int = 1
    """Upstream connections per origin (``h2-parallel:N``); 1 otherwise."""

    def __post_init__(self) -> None:
        if self.name == PARALLEL:
            if not 1 <= self.connections <= MAX_PARALLEL:
                raise ArmError(f"arm {self.name}:{self.connections}: N in h2-parallel:N must be "
                               f"a whole number from 1 to {MAX_PARALLEL}")
        elif self.name not in _NAMES or self.connections != 1:
            raise ArmError(f"unknown arm {self.name!r}: expected one of {known_arms()}")

    def __str__(self) -> str:
        return f"{PARALLEL}:{self.connections}" if self.name == PARALLEL else self.name

    @property
    def proxied(self) -> bool:
        """The whole load goes through the lab proxy (``PROXY_ARMS``)."""
        return self.name in _PROXIED

    @property
    def lab(self) -> bool:
        """A lab campaign can load a page under it (``BASE_ARMS`` and ``PROXY_ARMS``)."""
        return self.name in BASE_ARMS or self.proxied

    @property
    def policy(self) -> bool:
        """A policy rule may ask for it (``POLICY_ARMS``)."""
        return self.name in _POLICY

    @property
    def translated(self) -> bool:
        """As a per-domain rule, only the protocol-translating proxy can apply it."""
        return self.name in _TRANSLATED

    @property
    def upstream(self) -> Arm:
        """The per-host proxy rule of a whole-page proxied arm: ``proxy-h2`` -> ``h2``,
        ``h2-parallel:N`` unchanged."""
        return Arm(_UPSTREAM.get(self.name, self.name), self.connections)


def parallel_connections(text: str) -> int | None:
    """N for ``h2-parallel:N`` with N a whole number from 1 to ``MAX_PARALLEL``; None for any
    other text (including an ``h2-parallel:`` with a bad N)."""
    prefix, sep, n = text.partition(":")
    if prefix != PARALLEL or not sep or not (n.isascii() and n.isdigit()):
        return None
    return int(n) if 1 <= int(n) <= MAX_PARALLEL else None


def is_parallel(text: str) -> bool:
    """Text that starts like ``h2-parallel:``, valid or not (to word an error)."""
    return text.startswith(PARALLEL + ":")


def parse_arm(text: str) -> Arm:
    """Any arm, exactly as written; ``ArmError`` for other text."""
    if text in _NAMES:
        return Arm(text)
    n = parallel_connections(text)
    if n is not None:
        return Arm(PARALLEL, n)
    if is_parallel(text):
        raise ArmError(f"arm {text!r}: N in h2-parallel:N must be a whole number from 1 to "
                       f"{MAX_PARALLEL}")
    raise ArmError(f"unknown arm {text!r}: expected one of {known_arms()}")


def parse_lab_arm(text: str) -> Arm:
    """An arm a lab load can run under; ``ArmError`` for any other text."""
    try:
        arm = parse_arm(text)
    except ArmError:
        arm = None
    if arm is None or not arm.lab:
        raise ArmError(f"unknown arm {text!r}: expected one of {known_arms()}")
    return arm


def is_known(text: str) -> bool:
    """Any arm of the lab or of policies."""
    try:
        parse_arm(text)
    except ArmError:
        return False
    return True


def known_arms() -> str:
    """The lab's arms, for an error message."""
    return ", ".join((*BASE_ARMS, *PROXY_ARMS))
