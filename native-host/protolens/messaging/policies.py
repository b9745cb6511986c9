"""The ``policies`` message (docs/MESSAGES.md): the stored per-domain rules, the local relay's port
and its per-run credential, for the extension's everyday-browser policy client (docs/POLICY.md).

Pure: ``policies_reply(snapshot)`` builds the message; where the rules come from (the store) and
the relay (a thread of the host process) are the host adapter's business (``PolicySource``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protolens.messaging.schema import MESSAGE_SCHEMA
from protolens.policy.rules import Rule

RELAY_USER = "protolens"
"""User name of the relay's Basic credential (``proxy.core.basic_credential``)."""


@dataclass(frozen=True)
class PolicySnapshot:
    """What the extension needs to apply the rules in an everyday browser."""

    rules: Sequence[Rule]
    """Stored rules, most specific first."""
    relay_port: int | None
    """The relay's loopback port; None when no rule needs it (no ``no-h3`` rule) or it failed."""
    credential: str | None
    """The relay's per-run password (user ``protolens``); None without a relay."""
    error: str | None = None
    """Why rules or relay are unavailable (one line), else None."""


class PolicySource(Protocol):
    """The host adapter: reads the store and starts the relay when a rule needs it."""

    def snapshot(self, want_relay: bool = False) -> PolicySnapshot:
        """Current rules; ``want_relay``: start the relay even without a ``no-h3`` rule (the
        extension asks for it when the volunteer enrolled domains in an A/B experiment)."""
        ...


def needs_relay(rules: Sequence[Rule]) -> bool:
    """A ``no-h3`` rule is enforced through the relay (docs/POLICY.md, mechanisms)."""
    return any(r.arm.name == "no-h3" for r in rules)


def policies_reply(snap: PolicySnapshot) -> dict[str, Any]:
    """The ``policies`` message."""
    relay = None
    if snap.relay_port is not None and snap.credential is not None:
        relay = {"host": "127.0.0.1", "port": snap.relay_port, "username": RELAY_USER,
                 "password": snap.credential}
    return {"type": "policies", "schema": MESSAGE_SCHEMA,
            "rules": [r.as_dict() for r in snap.rules], "relay": relay, "error": snap.error}
