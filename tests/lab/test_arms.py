"""The arm grammar and the ``Arm`` value (protolens/arms.py), read by policies, lab launches,
proxy rules and bundle tags alike."""

from __future__ import annotations

import pytest

from protolens.arms import (
    Arm,
    ArmError,
    is_known,
    parallel_connections,
    parse_arm,
    parse_lab_arm,
)
from protolens.policy.rules import PolicyError
from protolens.policy.rules import parse_arm as parse_policy_arm
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
    assert is_known(arm) is known
    assert builtin("arm", arm) is known  # a bundle keeps exactly the known arms in clear
    if known:
        assert parse_arm(arm).proxied is proxied
        assert str(parse_arm(arm)) == arm  # the text stored and sent is the text parsed
    else:
        with pytest.raises(ArmError):
            parse_arm(arm)


def test_whole_page_arms_become_per_host_rules_the_policy_parser_accepts() -> None:
    assert parse_arm("proxy-h2").upstream == Arm("h2")
    assert parse_arm("h2-parallel:4").upstream == Arm("h2-parallel", 4)
    for text in ("proxy-h1", "proxy-h2", "proxy-h3", "h2-parallel:4"):
        upstream = parse_arm(text).upstream
        assert parse_policy_arm(str(upstream)) == upstream


def test_policy_parser_words_a_bad_parallel_count() -> None:
    with pytest.raises(PolicyError, match="whole number from 1 to 8"):
        parse_policy_arm("h2-parallel:\u00b2")


@pytest.mark.parametrize(("name", "connections"), [
    ("h4", 1), ("h2-parallel", 0), ("h2-parallel", 9), ("h2", 2), ("", 1)])
def test_only_valid_arms_can_be_made(name: str, connections: int) -> None:
    with pytest.raises(ArmError):
        Arm(name, connections)


def test_lab_loads_take_lab_arms_only() -> None:
    assert parse_lab_arm("policy").proxied and parse_lab_arm("h3").lab
    for text in ("no-h3", "default", "h4", "H2"):
        with pytest.raises(ArmError, match=f"unknown arm {text!r}"):
            parse_lab_arm(text)
