"""Policy files for lab campaigns (``protolens lab run --policy FILE``), TOML (pure parsing):

    # an HTTPX mix (CoNEXT'20): h1 for the host behind a delay-based server, h2 elsewhere
    [[rule]]
    domain = "b.test"
    arm = "h1"

    [[rule]]
    domain = "a.test"
    arm = "h2-parallel:2"
    latency_ms = 20          # optional
    throughput_kbps = 5000   # optional
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protolens.policy.rules import PolicyError, Rule, check_set, make_rule

_KEYS = {"domain", "arm", "latency_ms", "throughput_kbps"}


def parse_rules(data: Mapping[str, Any], source: str = "policy") -> list[Rule]:
    """Rules from a decoded policy document (``{"rule": [{domain, arm, ...}, ...]}``)."""
    extra = set(data) - {"rule"}
    if extra:
        raise PolicyError(f"{source}: unknown key {', '.join(sorted(extra))} (expected [[rule]])")
    items = data.get("rule")
    if not isinstance(items, list) or not items:
        raise PolicyError(f"{source}: no [[rule]] entries")
    rules = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise PolicyError(f"{source}: rule {i} is not a table")
        unknown = set(item) - _KEYS
        if unknown:
            raise PolicyError(f"{source}: rule {i}: unknown key {', '.join(sorted(unknown))}")
        if not isinstance(item.get("domain"), str) or not isinstance(item.get("arm"), str):
            raise PolicyError(f"{source}: rule {i}: needs domain and arm (strings)")
        try:
            rules.append(make_rule(item["domain"], item["arm"], _num(item, "latency_ms"),
                                   _num(item, "throughput_kbps")))
        except PolicyError as exc:
            raise PolicyError(f"{source}: rule {i}: {exc}") from None
    check_set(rules)
    return rules


def _num(item: Mapping[str, Any], key: str) -> float | None:
    v = item.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise PolicyError(f"{key} must be a number")
    return float(v)


def read_policy(path: Path) -> list[Rule]:
    """Read and validate a policy file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{path}: not valid TOML ({exc})") from None
    return parse_rules(data, str(path))


def to_stored(rules: Sequence[Rule]) -> list[dict[str, Any]]:
    """JSON-ready rules (campaign spec, proxy configuration)."""
    return [r.as_dict() for r in rules]


def from_stored(items: Sequence[Mapping[str, Any]]) -> list[Rule]:
    return parse_rules({"rule": [{k: v for k, v in i.items() if k != "kind" and v is not None}
                                 for i in items]}, "stored policy")
