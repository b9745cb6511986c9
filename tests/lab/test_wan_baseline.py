"""Baseline against current on real loads: three campaigns of one "real site" through the wan
path, under one condition whose profile file changes between them, as a slower network (or a
slower site) would: ``compare --baseline`` must find the slowdown the slower profile injects,
find none between the two runs of the same profile, and ``--fail-on-regression`` must exit as
documented. Then ``lab reproduce --urls`` runs a paper's conditions on the same site.

The "real site" is a STAND-IN (``scripts/devkit/standin.py``): this machine has no internet and
no test may send traffic off it. Everything else is real: the wan network and its shaper,
Chromium with the extension, SQLite.

Cost: about 65 s under the heavy lock (18 loads: 12 for the baseline, 6 for reproduce).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.devkit.standin import Standin, standin_internet
from tests.cli.run import protolens
from tests.testbed.conftest import lab_available, wan_traces

pytestmark = [pytest.mark.netns, pytest.mark.e2e]

WAN = "plxb"
REPS = "4"
"""Per campaign: the fewest loads at which compare's 95% interval exists (4 against 4)."""
FAST = ("--quiet-ms", "500", "--overlap")
"""A real site's load waits the recorder's 2 s quiet with no browser started beside it (the
defaults, which tests/lab/test_wan_campaign.py runs): 3.3-3.5 s of wall a load for a page of
320-370 ms. What is checked here is the comparisons and the stored profiles, so the testbed's
quiet and overlap run instead: 1.0-2.4 s a load (2026-11-28, PLT 333-418 ms against 1,397-1,422
for the slower profile; the set-up 34 s against 57)."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Standin]]:
    """Campaigns ``base`` and ``same`` under profile file site.toml at 20 ms RTT, then ``slow``
    under the same file at 120 ms (h2, the stand-in's page), on one wan network."""
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("baseline")
    db, profile = work / "lab.db", work / "site.toml"
    protolens("cc", "wan", "down", "--name", WAN, check=False)
    before = wan_traces(WAN)
    with standin_internet(work / "standin") as net:
        up = protolens("cc", "wan", "up", "--name", WAN, "--uplink", net.uplink, "--resolver",
                       net.resolver, check=False)
        assert up.returncode == 0, up.stderr
        try:
            for name, rtt in (("base", 20), ("same", 20), ("slow", 120)):
                profile.write_text(f'[link]\nrate_mbit = 20\nrtt_ms = {rtt}\n')
                out = protolens("lab", "run", net.url, "--arms", "h2", "--conditions",
                                str(profile), "--reps", REPS, "--campaign", name, "--seed",
                                "3", "--wan", WAN, "--ca", str(net.ca), *FAST, db=db,
                                check=False, timeout=300)
                assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
            yield db, net
        finally:
            protolens("cc", "wan", "down", "--name", WAN, check=False)
    assert wan_traces(WAN) == before


def compare(db: Path, current: str, *extra: str) -> tuple[int, list[dict[str, object]], str]:
    p = protolens("compare", "--baseline", "base", "--campaign", current, "--json", *extra,
                  db=db, check=False)
    return p.returncode, json.loads(p.stdout) if p.stdout else [], p.stderr


def test_the_slower_profile_is_found_and_the_same_one_is_not(
        runs: tuple[Path, Standin]) -> None:
    db, _ = runs
    code, (slow,), _ = compare(db, "slow")
    assert code == 0 and slow["outcome"] == "above", slow
    assert slow["n_baseline"] == slow["n_current"] == 4
    # 100 ms more per round trip: the page's set-up and fetches take several round trips
    assert float(str(slow["ci_low_ms"])) > 100, slow
    code, (same,), _ = compare(db, "same")
    assert code == 0, same
    # Two campaigns of one profile are identical arms, which the rule calls different in about
    # 3% of 4-against-4 comparisons by design (all four of one above all four of the other:
    # 2 / C(8, 4), docs/RESEARCH.md "The verdict rule"), and more often when the machine drifts
    # between the campaigns run one after the other (a CI run on 2026-11-27 read "below").
    # What must never happen is a slowdown of the injected kind: a call other than "overlaps"
    # is accepted only for a difference under a tenth of the slower profile's.
    # Both differences are read whatever the outcome, so that a wrong field name fails every run
    # (a CI run on 2026-11-28 took the branch below for the first time and found "diff_ms",
    # the field of `compare`'s arm rows, where baseline rows say "change_ms").
    same_ms, slow_ms = float(str(same["change_ms"])), float(str(slow["change_ms"]))
    assert slow_ms > 100, slow
    assert same["outcome"] == "overlaps" or abs(same_ms) < 0.1 * slow_ms, (same, slow)


def test_fail_on_regression_exits_as_documented(runs: tuple[Path, Standin]) -> None:
    db, _ = runs
    code, _, err = compare(db, "slow", "--fail-on-regression", "10")
    assert code == 1 and "regression: " in err, err
    code, _, err = compare(db, "same", "--fail-on-regression", "10")
    assert code == 0, err


def test_each_run_recorded_the_profile_it_ran(runs: tuple[Path, Standin]) -> None:
    from tests.cli.run import store_rows

    db, net = runs
    got = {r["campaign"]: json.loads(r["network"]) for r in store_rows(
        db, "SELECT campaign, network FROM campaign_runs")}
    assert {c: (n["path"], n["uplink"]) for c, n in got.items()} == dict.fromkeys(
        ("base", "same", "slow"), ("wan", net.uplink))
    rtts = {c: next(iter(n["profiles"].values()))["rtt_ms"] for c, n in got.items()}
    assert rtts == {"base": 20.0, "same": 20.0, "slow": 120.0}


def test_reproduce_runs_the_papers_conditions_on_the_real_site(
        runs: tuple[Path, Standin], tmp_path: Path) -> None:
    """ifip18-wifi's quick part (wifi and wifi-lossy x h1, h2, h3), one load per cell, on the
    stand-in site: the campaign ran there and the output says so (too few loads for verdicts)."""
    from tests.cli.run import store_rows

    db, net = runs
    urls = tmp_path / "sites.txt"
    urls.write_text(f"# the stand-in\n{net.url}\n")
    out = protolens("lab", "reproduce", "ifip18-wifi", "--quick", "--reps", "1", "--urls",
                    str(urls), "--wan", WAN, "--ca", str(net.ca), "--json", db=db, check=False,
                    timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    rep = json.loads(out.stdout)
    assert rep["real_sites"] == [net.url] and rep["failed_loads"] == 0
    assert rep["measured"][0].startswith("on 1 real site(s), not the testbed's replicas")
    (name,) = rep["campaigns"].values()
    cells = store_rows(db, "SELECT page, condition, arm FROM navigations WHERE campaign = ?",
                       name)
    assert sorted((c["condition"], c["arm"]) for c in cells) == sorted(
        (c, a) for c in ("wifi", "wifi-lossy") for a in ("h1", "h2", "h3"))
    assert {c["page"] for c in cells} == {net.url}
