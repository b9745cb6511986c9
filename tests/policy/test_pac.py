"""The host's PAC script (protolens/policy/pac.py) on the cases the extension's ``pacScript``
answers too (tests/cases/pac.json, read by tests/extension/policy-rules.test.ts): the generated
JavaScript runs in node, with ``dnsDomainIs`` defined as Chromium's PAC runner defines it
(net/proxy_resolution/pac_js_library.h)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from protolens.policy.pac import pac_script
from protolens.policy.rules import Rule, match, parse_arm

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "cases" / "pac.json").read_text())["cases"]

RUN_PAC = """
const vm = require("node:vm");
const jobs = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const dnsDomainIs = (h, d) => h.length >= d.length && h.substring(h.length - d.length) == d;
const out = jobs.map(({ pac, routes }) => {
  const sandbox = { dnsDomainIs };
  vm.runInNewContext(pac, sandbox);
  return routes.map(([url, host]) => sandbox.FindProxyForURL(url, host));
});
process.stdout.write(JSON.stringify(out));
"""


def _rules(case: dict[str, Any]) -> list[Rule]:
    # as the policies message carries them: already normalized, so built without re-validation
    return [Rule(r["domain"], r["kind"], parse_arm(r["arm"])) for r in case["rules"]]


def _port(case: dict[str, Any]) -> int | None:
    return None if case["relay"] is None else int(case["relay"]["port"])


@pytest.fixture(scope="module")
def answers() -> dict[str, list[str]]:
    """Every case's FindProxyForURL answers, from one node run."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/setup.sh installs it)")
    jobs = [{"pac": pac_script(_port(c), _rules(c)), "routes": c["routes"]} for c in CASES]
    out = subprocess.run([node, "-e", RUN_PAC], input=json.dumps(jobs), capture_output=True,
                         text=True, check=True, timeout=60)
    return {c["name"]: got for c, got in zip(CASES, json.loads(out.stdout), strict=True)}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_pac_answers_the_shared_case(case: dict[str, Any], answers: dict[str, list[str]]) -> None:
    want = [[url, expected] for url, _host, expected in case["routes"]]
    got = [[url, answer] for (url, _host, _), answer in zip(case["routes"], answers[case["name"]],
                                                            strict=True)]
    assert got == want


@pytest.mark.parametrize("case", [c for c in CASES if c["relay"] is not None],
                         ids=[c["name"] for c in CASES if c["relay"] is not None])
def test_the_relay_accepts_exactly_the_hosts_the_pac_sends_it(case: dict[str, Any]) -> None:
    # host/relay.py StorePolicies.relayed: the most specific rule is no-h3
    rules = _rules(case)
    for _url, host, expected in case["routes"]:
        rule = match(rules, host)
        assert (expected != "DIRECT") == (rule is not None and rule.arm.name == "no-h3"), host

