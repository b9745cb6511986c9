"""Policy rules (pure): parsing, matching precedence, conflicts, mechanisms, policy files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protolens.arms import Arm
from protolens.policy.file import from_stored, parse_rules, read_policy, to_stored
from protolens.policy.mechanism import enforcement, whole_browser
from protolens.policy.rules import (
    PolicyError,
    check_set,
    conflict,
    make_rule,
    match,
    parse_arm,
    parse_domain,
)


@pytest.mark.parametrize(("text", "arm"), [
    ("h1", Arm("h1")), ("H2", Arm("h2")), ("h3", Arm("h3")), ("no-h3", Arm("no-h3")),
    ("default", Arm("default")), ("h2-parallel:1", Arm("h2-parallel", 1)),
    ("h2-parallel:8", Arm("h2-parallel", 8))])
def test_parse_arm(text: str, arm: Arm) -> None:
    assert parse_arm(text) == arm
    assert parse_arm(str(arm)) == arm


@pytest.mark.parametrize("text", ["h2-parallel:0", "h2-parallel:9", "h2-parallel:x",
                                  "h2-parallel", "http2", "", "h2-parallel:-1"])
def test_bad_arm(text: str) -> None:
    with pytest.raises(PolicyError, match="arm"):
        parse_arm(text)


@pytest.mark.parametrize(("text", "norm", "kind"), [
    ("Example.COM.", "example.com", "registrable"), ("www.example.com", "www.example.com", "exact"),
    ("*.example.com", "*.example.com", "wildcard"), ("bbc.co.uk", "bbc.co.uk", "registrable"),
    ("news.bbc.co.uk", "news.bbc.co.uk", "exact"), ("a.test", "a.test", "registrable")])
def test_parse_domain(text: str, norm: str, kind: str) -> None:
    assert parse_domain(text) == (norm, kind)


@pytest.mark.parametrize(("text", "why"), [
    ("com", "public suffix"), ("co.uk", "public suffix"), ("*.com", "public suffix"),
    ("*.co.uk", "public suffix"), ("w.*.example.com", "first label"), ("**.example.com", "'*'"),
    ("https://example.com/", "not a URL"), ("example.com:443", "host:port"),
    ("exa mple.com", "valid host"), ("-bad.example.com", "valid host"), ("", "empty"),
    ("10.0.0.1", "IP")])
def test_bad_domain(text: str, why: str) -> None:
    with pytest.raises(PolicyError, match=why):
        parse_domain(text)


def test_match_most_specific_wins() -> None:
    rules = [make_rule("example.com", "h2"), make_rule("*.example.com", "h1"),
             make_rule("*.img.example.com", "h3"), make_rule("www.example.com", "no-h3")]
    assert str(match(rules, "example.com").arm) == "h2"  # type: ignore[union-attr]
    assert str(match(rules, "www.example.com").arm) == "no-h3"  # type: ignore[union-attr]
    assert str(match(rules, "cdn.example.com").arm) == "h1"  # type: ignore[union-attr]
    assert str(match(rules, "a.img.example.com").arm) == "h3"  # type: ignore[union-attr]
    assert match(rules, "example.org") is None
    assert match(rules, "notexample.com") is None
    assert match([make_rule("*.example.com", "h1")], "example.com") is None


@given(st.permutations([("example.com", "h2"), ("*.example.com", "h1"),
                        ("www.example.com", "no-h3")]))
def test_match_ignores_order(order: list[tuple[str, str]]) -> None:
    rules = [make_rule(d, a) for d, a in order]
    assert match(rules, "www.example.com").domain == "www.example.com"  # type: ignore[union-attr]


def test_conflicts() -> None:
    existing = [make_rule("a.test", "h1")]
    assert "already has a rule (h1)" in (conflict(existing, make_rule("A.test", "h2")) or "")
    assert "already has this rule" in (conflict(existing, make_rule("a.test", "h1")) or "")
    assert conflict(existing, make_rule("*.a.test", "h2")) is None
    with pytest.raises(PolicyError, match="two rules"):
        check_set([make_rule("a.test", "h1"), make_rule("a.test", "h2")])


def test_shaping_bounds() -> None:
    with pytest.raises(PolicyError, match="latency"):
        make_rule("a.test", "h1", latency_ms=-1)
    with pytest.raises(PolicyError, match="throughput"):
        make_rule("a.test", "h1", throughput_kbps=0)


def test_mechanisms() -> None:
    h1 = make_rule("a.test", "h1")
    assert enforcement(h1, lab=True, proxied=True).mechanism == "proxy"
    assert enforcement(h1, lab=False).mechanism == "unsupported"
    no3 = make_rule("b.test", "no-h3", latency_ms=20)
    assert enforcement(no3, lab=False).mechanism == "relay+cdp-throttling"
    assert enforcement(no3, lab=True, proxied=True).mechanism == "proxy-tunnel+cdp-throttling"
    assert enforcement(None, lab=True, proxied=True) .mechanism == "proxy-tunnel"
    assert enforcement(None, lab=False).mechanism == "none"
    assert whole_browser(Arm("h1")).mechanism == "chromium-flags"


def test_policy_file(tmp_path: Path) -> None:
    p = tmp_path / "mix.toml"
    p.write_text('[[rule]]\ndomain = "b.test"\narm = "h1"\n\n'
                 '[[rule]]\ndomain = "a.test"\narm = "h2-parallel:2"\nlatency_ms = 20\n')
    rules = read_policy(p)
    assert [str(r.arm) for r in rules] == ["h1", "h2-parallel:2"]
    assert from_stored(to_stored(rules)) == rules


@pytest.mark.parametrize(("text", "why"), [
    ("", "no \\[\\[rule\\]\\]"), ("[[rule]]\ndomain = 'a.test'\n", "needs domain and arm"),
    ("[[rule]]\ndomain = 'a.test'\narm = 'h4'\n", "rule 1: unknown arm"),
    ("[[rule]]\ndomain = 'a.test'\narm = 'h1'\ncolour = 1\n", "unknown key colour"),
    ("[[rule]]\ndomain = 'a.test'\narm = 'h1'\nlatency_ms = 'x'\n", "must be a number"),
    ("[[rule]]\ndomain = 'a.test'\narm = 'h1'\n[[rule]]\ndomain = 'a.test'\narm = 'h2'\n",
     "two rules"),
    ("[rules]\n", "unknown key rules"), ("[[rule]\n", "not valid TOML")])
def test_bad_policy_file(tmp_path: Path, text: str, why: str) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(PolicyError, match=why):
        read_policy(p)


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="No such file"):
        read_policy(tmp_path / "nope.toml")
    with pytest.raises(PolicyError):
        parse_rules({"rule": [1]})
