"""The arm grammar (protolens/arms.py), read by policies, lab launches, proxy rules and bundle
tags alike."""

from __future__ import annotations

import pytest

from protolens.arms import is_known, is_proxied, parallel_connections, upstream_rule_arm
from protolens.policy.rules import PolicyError, parse_arm
from protolens.share.tags import builtin


@pytest.mark.parametrize(("text", "n"), [
    ("h2-parallel:1", 1), ("h2-parallel:8", 8), ("h2-parallel:0", None), ("h2-parallel:9", None),
    ("h2-parallel:", None), ("h2-parallel:2x", None), ("h2-parallel:\u00b2", None),
    ("h2-parallel", None), ("h2", None), ("proxy-h2", None)])
def test_parallel_connections(text: str, n: int | None) -> None:
    assert parallel_connections(text) == n


@pytest.mark.parametrize(("arm", "proxied", "known"), [
    ("h1", False, True), ("h3", False, True), ("no-h3", False, True), ("default", False, True),
    ("proxy-h1", True, True), ("proxy-h3", True, True), ("policy", True, True),
    ("h2-parallel:3", True, True), ("h2-parallel:9", False, False), ("proxy-h4", False, False),
    ("h2-parallel:N", False, False), ("", False, False)])
def test_proxied_and_known_agree_across_readers(arm: str, proxied: bool, known: bool) -> None:
    assert is_proxied(arm) is proxied
    assert is_known(arm) is known
    assert builtin("arm", arm) is known  # a bundle keeps exactly the known arms in clear


def test_whole_page_arms_become_per_host_rules_the_policy_parser_accepts() -> None:
    assert upstream_rule_arm("proxy-h2") == "h2"
    assert upstream_rule_arm("h2-parallel:4") == "h2-parallel:4"
    for arm in ("proxy-h1", "proxy-h2", "proxy-h3", "h2-parallel:4"):
        assert str(parse_arm(upstream_rule_arm(arm))) == upstream_rule_arm(arm)


def test_policy_parser_words_a_bad_parallel_count() -> None:
    with pytest.raises(PolicyError, match="whole number from 1 to 8"):
        parse_arm("h2-parallel:\u00b2")
