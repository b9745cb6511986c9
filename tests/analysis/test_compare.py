"""compare: statistics against known distributions, verdicts, reproducibility, the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.analysis.compare import compare, compare_pair, words
from protolens.analysis.observe import Observation, domain_of, observations
from protolens.analysis.verdict import Effect, decide
from protolens.cli import main
from scripts.devkit.store_builder import campaign_store, ingest_all, lab_record


def _samples(seed: int, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.lognormal(8.0, 0.3, n) + shift, rng.lognormal(8.0, 0.3, n)


def test_a_shifted_sample_is_detected_and_the_ci_covers_the_shift() -> None:
    a, b = _samples(1, 40, 900.0)
    c = compare_pair("p", "c", "h1", list(a), "h2", list(b))
    assert c.significant and c.outcome == "above"
    assert c.p_value is not None and c.p_value < 0.001
    assert c.ci_low_ms is not None and c.ci_high_ms is not None
    assert c.ci_low_ms < 900.0 < c.ci_high_ms
    assert c.verdict.startswith("h2 faster by ")
    assert c.diff_ms == pytest.approx(np.median(np.subtract.outer(a, b)))
    assert c.level == 0.95


def test_the_interval_covers_the_true_shift_at_the_nominal_rate() -> None:
    covered = sum(
        (lambda c: c.ci_low_ms <= 600.0 <= c.ci_high_ms)(
            compare_pair("p", "c", "a", list(s[0]), "b", list(s[1])))
        for s in (_samples(100 + t, 30, 600.0) for t in range(200)))
    assert covered >= 186  # an exact interval: at least 95% of 200 = 190, less Monte Carlo slack


def test_an_identical_sample_is_not_a_difference() -> None:
    a, _ = _samples(2, 12, 0.0)
    c = compare_pair("p", "c", "h1", list(a), "h2", list(a))
    assert not c.significant
    assert c.diff_ms == 0.0
    assert c.verdict == "no difference detected at n=12"


def test_three_loads_per_arm_cannot_decide_whatever_the_gap() -> None:
    """The issue's case: -4,820 ms at n=3, whose smallest two-sided rank p is 0.10."""
    c = compare_pair("ifip18-facebook", "wifi-lossy", "h1", [5210.0, 5630.0, 6020.0], "h2",
                     [10050.0, 10400.0, 11300.0])
    assert c.outcome == "undecided" and not c.significant
    assert c.verdict == "too few loads to decide (needs n ≥ 4 per arm)"
    assert c.ci_low_ms is None and c.ci_high_ms is None
    assert c.p_value == pytest.approx(0.1)  # the column stays
    four = compare_pair("g", "c", "h1", [5210.0, 5630.0, 6020.0, 5400.0], "h2",
                        [10050.0, 10400.0, 11300.0, 9900.0])
    assert four.verdict.startswith("h1 faster by 4.") and four.ci_high_ms < 0  # type: ignore


def test_a_zero_width_interval_over_many_loads_is_an_error_not_a_result() -> None:
    c = compare_pair("g", "c", "h2", [335.0] * 6, "h3", [0.0] * 6)
    assert c.outcome == "error" and not c.significant
    assert c.ci_low_ms is None and c.ci_high_ms is None
    assert "zero-width interval" in c.verdict and "12 loads" in c.verdict


def test_verdict_texts() -> None:
    def say(diff: float, low: float, high: float, n_a: int = 12, n_b: int = 12) -> str:
        v = decide(Effect(diff, low, high, n_a + n_b))
        return words("h1", "h2", n_a, n_b, v, diff, low, high)

    assert say(-1900.0, -2300.0, -1400.0) == "h1 faster by 1.9 s [1.4, 2.3]"
    assert say(120.0, 80.0, 160.0, 12, 10) == "h2 faster by 120 ms [80, 160]"
    assert say(120.0, -5.0, 160.0, 12, 10) == "no difference detected at n=12/10"
    v = decide(Effect(-10.0, None, None, 4, needs_n=4))
    assert words("h1", "h2", 2, 2, v, -10.0, None, None) == \
        "too few loads to decide (needs n ≥ 4 per arm)"


def test_deterministic_and_independent_of_input_order_and_other_cells() -> None:
    a, b = _samples(4, 15, 300.0)
    obs = [Observation("p", "c", "x", v) for v in a] + [Observation("p", "c", "y", v) for v in b]
    other = [Observation("q", "c", arm, 1000.0 + i) for i in range(5) for arm in ("x", "y")]
    first = compare(obs)
    shuffled = obs + other
    random.Random(1).shuffle(shuffled)
    again = [c for c in compare(shuffled) if c.group == "p"]
    assert first == again


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
