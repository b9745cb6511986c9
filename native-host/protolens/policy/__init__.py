"""Per-domain protocol policies (pure): rules, matching, conflicts, mechanism selection.

``rules``: parsing and validating DOMAIN and ARM, the ``Rule`` record, matching a host.
``mechanism``: which mechanism enforces a rule in a lab profile and in an everyday browser
(docs/ARCHITECTURE.md, "How each protocol policy can be applied"). ``file``: policy files (TOML).
Storage is ``protolens.store.policy``; the CLI is ``protolens.cli.policy``.
"""

from protolens.policy.rules import Arm, PolicyError, Rule, match, parse_arm, parse_domain

__all__ = ["Arm", "PolicyError", "Rule", "match", "parse_arm", "parse_domain"]
