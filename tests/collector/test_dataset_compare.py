"""``compare --dataset``: DuckDB over the collector's Parquet dataset, the contributor as a
stratum (van Elteren), per domain and network type."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from protolens.analysis.compare import compare
from protolens.analysis.observe import Observation
from protolens.analysis.stratified import Stratum, compare_stratified, van_elteren_p
from protolens.store.dataset import compare_rows
from scripts.devkit.collector import cli
from tests.collector.dataset_builder import make_dataset


def test_van_elteren_with_one_stratum_is_mann_whitney() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 30).round(1), rng.normal(0.5, 1, 25).round(1)  # with ties
    want = mannwhitneyu(a, b, method="asymptotic", use_continuity=False).pvalue
    assert van_elteren_p([Stratum(a, b)]) == pytest.approx(want, rel=1e-9)


def _obs(rng: np.random.Generator, strata: int, shift: float) -> dict[str, list[Observation]]:
    out: dict[str, list[Observation]] = {}
    for s in range(strata):
        base = 1000.0 * s
        out[f"c{s}"] = [Observation("g", "all", "a", base + rng.normal(0, 10) - shift)
                        for _ in range(8)] + \
                       [Observation("g", "all", "b", base + rng.normal(0, 10)) for _ in range(8)]
    return out


def test_stratifying_finds_a_shift_that_pooling_hides() -> None:
    by = _obs(np.random.default_rng(2), strata=8, shift=40.0)
    pooled = compare([o for v in by.values() for o in v])[0]
    (strat, n), = compare_stratified(by)
    assert not pooled.significant  # contributor spread (1000 ms) swamps a 40 ms shift
    assert strat.significant and strat.verdict.startswith("a faster") and n == 8
    assert strat.diff_ms == pytest.approx(-40.0, abs=10)
    assert strat.ci_low_ms < -40 < strat.ci_high_ms < 0  # type: ignore[operator]
    (null, _), = compare_stratified(_obs(np.random.default_rng(4), strata=8, shift=0.0))
    assert not null.significant


def test_one_contributor_gives_no_verdict() -> None:
    by = _obs(np.random.default_rng(5), strata=1, shift=500.0)
    (c, n), = compare_stratified(by)
    assert n == 1 and c.p_value is None and "too few contributors" in c.verdict


def test_dataset_rows_carry_contributor_and_network(tmp_path: Path) -> None:
    data = make_dataset(tmp_path, contributors=3, per_cell=2)
    rows = compare_rows(data, source="experiment")
    assert len(rows) == 3 * 2 * 2 * 2 * 2
    assert {r["contributor"] for r in rows} == {"vol-0", "vol-1", "vol-2"}
    assert {r["condition"] for r in rows} == {"4g", "3g"}
    assert {r["main_family"] for r in rows} == {"h2", "h3"}
    per_bundle: dict[str, int] = defaultdict(int)
    for r in rows:
        per_bundle[r["bundle"]] += 1
    assert sorted(per_bundle.values()) == [16, 16, 16]


def test_compare_dataset_cli(tmp_path: Path) -> None:
    data = make_dataset(tmp_path)
    res = cli("compare", "--dataset", str(data), "--source", "experiment", "--json")
    cells = {(r["group"], r["condition"]): r for r in json.loads(res.stdout)}
    assert set(cells) == {("a.test", "3g"), ("a.test", "4g"), ("b.test", "3g"), ("b.test", "4g")}
    for (_, net), r in cells.items():
        assert r["contributors"] == 6 and r["n_a"] == r["n_b"] == 36
        if net == "3g":
            assert r["verdict"].startswith("h3 faster"), r
            assert r["ci_low_ms"] > 0  # diff = h2 - h3 > 0
        else:
            assert not r["significant"], r
    table = cli("compare", "--dataset", str(data), "--source", "experiment")
    assert "contributors" in table.stdout
    bad = cli("compare", "--dataset", str(tmp_path / "nothing"), "--source", "experiment",
              check=False)
    assert bad.returncode == 2 and "no collector dataset" in bad.stderr
