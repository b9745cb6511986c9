"""compare: statistics against known distributions, verdicts, reproducibility, the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.analysis.compare import compare, compare_pair, verdict
from protolens.analysis.observe import Observation, domain_of, observations
from protolens.cli import main
from scripts.devkit.store_builder import campaign_store, ingest_all, lab_record


def _samples(seed: int, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.lognormal(8.0, 0.3, n) + shift, rng.lognormal(8.0, 0.3, n)


def test_a_shifted_sample_is_detected_and_the_ci_covers_the_shift() -> None:
    a, b = _samples(1, 40, 900.0)
    c = compare_pair("p", "c", "h1", list(a), "h2", list(b), seed=3)
    assert c.significant
    assert c.p_value is not None and c.p_value < 0.001
    assert c.ci_low_ms is not None and c.ci_high_ms is not None
    assert c.ci_low_ms < 900.0 < c.ci_high_ms
    assert c.verdict.startswith("h2 faster by ")
    assert c.diff_ms == pytest.approx(np.median(a) - np.median(b))


def test_the_interval_covers_the_true_shift_at_about_the_nominal_rate() -> None:
    covered = sum(
        (lambda c: c.ci_low_ms <= 600.0 <= c.ci_high_ms)(
            compare_pair("p", "c", "a", list(s[0]), "b", list(s[1]), seed=t, resamples=1000))
        for t, s in ((t, _samples(100 + t, 30, 600.0)) for t in range(40)))
    assert covered >= 34  # nominal 95% of 40 = 38; percentile intervals run a little narrow


def test_samples_from_one_distribution_are_rarely_called_different() -> None:
    hits = sum(compare_pair("p", "c", "a", list(s[0]), "b", list(s[1]), seed=t,
                            resamples=500).significant
               for t, s in ((t, _samples(500 + t, 25, 0.0)) for t in range(40)))
    assert hits <= 5  # alpha 5% of 40 = 2 expected


def test_an_identical_sample_is_not_a_difference() -> None:
    a, _ = _samples(2, 12, 0.0)
    c = compare_pair("p", "c", "h1", list(a), "h2", list(a), seed=0)
    assert not c.significant
    assert c.diff_ms == 0.0
    assert c.verdict == "no difference detected at n=12"


def test_verdict_texts() -> None:
    assert verdict("h1", "h2", 12, 12, -1900.0, -2300.0, -1400.0, 0.001) == (
        True, "h1 faster by 1.9 s [1.4, 2.3]")
    assert verdict("h1", "h2", 12, 10, 120.0, 80.0, 160.0, 0.01) == (
        True, "h2 faster by 120 ms [80, 160]")
    assert verdict("h1", "h2", 12, 10, 120.0, -5.0, 160.0, 0.01)[1] == \
        "no difference detected at n=12/10"
    assert verdict("h1", "h2", 12, 12, 120.0, 80.0, 160.0, 0.2)[0] is False
    assert verdict("h1", "h2", 1, 3, None, None, None, None)[1].startswith("too few loads")


def test_seeded_and_independent_of_input_order_and_other_cells() -> None:
    a, b = _samples(4, 15, 300.0)
    obs = [Observation("p", "c", "x", v) for v in a] + [Observation("p", "c", "y", v) for v in b]
    other = [Observation("q", "c", arm, 1000.0 + i) for i in range(5) for arm in ("x", "y")]
    first = compare(obs, seed=9)
    shuffled = obs + other
    random.Random(1).shuffle(shuffled)
    again = [c for c in compare(shuffled, seed=9) if c.group == "p"]
    assert first == again
    assert compare(obs, seed=10)[0].ci_low_ms != first[0].ci_low_ms


def test_arms_option_orders_and_restricts_pairs() -> None:
    obs = [Observation("p", "c", arm, float(v)) for arm in ("h1", "h2", "h3") for v in range(5)]
    assert [(c.arm_a, c.arm_b) for c in compare(obs)] == [("h1", "h2"), ("h1", "h3"),
                                                          ("h2", "h3")]
    assert [(c.arm_a, c.arm_b) for c in compare(obs, arms=["h3", "h1"])] == [("h3", "h1")]


def test_observations_modes_and_domains() -> None:
    rows = [
        {"origin": "https://en.wikipedia.org", "page": None, "condition": None, "arm": None,
         "main_family": "h2", "warm": 0, "failed": 0, "plt_ms": 10.0},
        {"origin": "https://example.com:8443", "page": None, "condition": None, "arm": None,
         "main_family": "h3", "warm": 0, "failed": 0, "plt_ms": 20.0},
        {"origin": "https://en.wikipedia.org", "main_family": "h2", "warm": 1, "failed": 0,
         "plt_ms": 30.0},
        {"origin": "https://en.wikipedia.org", "main_family": "h2", "warm": 0, "failed": 1,
         "plt_ms": 40.0},
    ]
    got = observations(rows, "plt", "passive")
    assert got == [Observation("en.wikipedia.org", "all", "h2", 10.0),
                   Observation("example.com", "all", "h3", 20.0)]
    assert [o.value_ms for o in observations(rows, "plt", "passive", domain="wikipedia.org")] \
        == [10.0]
    assert [o.value_ms for o in observations(rows, "plt", "passive", warm=True)] == [30.0]
    assert domain_of("anon-1f2e") == "anon-1f2e"
    with pytest.raises(ValueError, match="metric"):
        observations(rows, "speed", "passive")


def test_cli_campaign_json_finds_the_lossy_h2_slowdown(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=8, shift_ms=1500.0)
    res = CliRunner().invoke(main, ["compare", "--campaign", "camp", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 2 * 2 * 3
    lossy = {(r["group"], r["arm_a"], r["arm_b"]): r for r in rows if r["condition"] == "lossy"}
    assert lossy[("large", "h1", "h2")]["verdict"].startswith("h1 faster by 1.5 s")
    assert lossy[("small", "h2", "h3")]["verdict"].startswith("h3 faster by 1.5 s")
    assert not any(r["significant"] for r in rows if r["condition"] == "clean"
                   and r["p_value"] < 0.01)
    csv = CliRunner().invoke(main, ["compare", "--campaign", "camp", "--db", str(db), "--csv",
                                    "--metric", "ttfb", "--arms", "h2,h1"])
    assert csv.exit_code == 0
    lines = csv.output.strip().splitlines()
    assert lines[0].startswith("group,condition,arm_a,arm_b,n_a")
    assert len(lines) == 1 + 4 and all(",h2,h1," in line for line in lines[1:])


def test_cli_passive_by_domain(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    recs = [lab_record(i, "", "", "", "h1" if i % 2 else "h2", 0, 1000.0 + 10 * i,
                       source="passive", origin_host="news.example.org") for i in range(10)]
    ingest_all(db, recs)
    res = CliRunner().invoke(main, ["compare", "--source", "passive", "--domain", "example.org",
                                    "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.output)
    assert (row["group"], row["arm_a"], row["arm_b"], row["n_a"], row["n_b"]) == \
        ("news.example.org", "h1", "h2", 5, 5)


@pytest.mark.parametrize("args,message", [
    ([], "exactly one of"),
    (["--campaign", "x", "--source", "passive"], "exactly one of"),
    (["--campaign", "nope"], "no navigations in campaign 'nope' (known: camp)"),
    (["--campaign", "camp", "--domain", "a.test"], "--domain applies"),
    (["--campaign", "camp", "--arms", "h1"], "at least two arms"),
])
def test_cli_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=2)
    res = CliRunner().invoke(main, ["compare", "--db", str(db), *args])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_cli_missing_store_is_not_created(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    res = CliRunner().invoke(main, ["compare", "--campaign", "x", "--db", str(db)])
    assert res.exit_code == 2 and "no database here" in res.output
    assert not db.exists()
