"""Per-domain protocol policies (pure): rules, matching, conflicts, mechanism selection.

``rules``: parsing and validating DOMAIN and ARM (an ``arms.Arm`` a rule may ask for), the
``Rule`` record, matching a host. ``pac``: the PAC script that sends ``no-h3`` hosts to the relay.
``mechanism``: which mechanism enforces a rule in a lab profile and in an everyday browser
(docs/ARCHITECTURE.md, "How each protocol policy can be applied"). ``file``: policy files (TOML).
Storage is ``protolens.store.policy``; the CLI is ``protolens.cli.policy``.
"""

from protolens.policy.rules import PolicyError, Rule, match, parse_arm, parse_domain

__all__ = ["PolicyError", "Rule", "match", "parse_arm", "parse_domain"]
