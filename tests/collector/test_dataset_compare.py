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
from tests.collector.dataset_builder import INCOMPLETE_CELL, make_dataset


def test_van_elteren_with_one_stratum_is_mann_whitney() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 30).round(1), rng.normal(0.5, 1, 25).round(1)  # with ties
    want = mannwhitneyu(a, b, method="asymptotic").pvalue
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
    assert n == 1 and c.p_value is None and c.ci_low_ms is None and not c.significant
    assert c.verdict == "all 16 loads come from one contributor: no interval across contributors"
    by["c1"] = [o for o in _obs(np.random.default_rng(6), 1, 0.0)["c0"] if o.arm == "a"]
    (c, n), = compare_stratified(by)
    assert n == 1 and c.verdict.startswith("only one contributor has loads of both arms")


def test_two_tokens_with_the_same_loads_give_no_zero_width_result() -> None:
    """Two contributors holding the same copies: the interval comes from the rank test, never
    from resampling two identical strata (which gave "[335, 335]")."""
    one = _obs(np.random.default_rng(7), strata=1, shift=300.0)["c0"]
    (c, n), = compare_stratified({"tok-1": one, "tok-2": list(one)})
    assert n == 2 and c.ci_low_ms is not None and c.ci_high_ms is not None
    assert c.ci_high_ms - c.ci_low_ms > 10
    copies = {f"tok-{i}": [Observation("g", "all", arm, v) for arm, v in (("a", 0.0), ("b", 335.0))
                           for _ in range(4)] for i in range(2)}
    (z, _), = compare_stratified(copies)
    assert z.outcome == "error" and "zero-width" in z.verdict and z.ci_low_ms is None


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


def test_compare_dataset_leaves_incomplete_loads_out_as_compare_does(tmp_path: Path) -> None:
    """The one rule (record/comparable.py) in DuckDB's cells: each contributor's 4 loads that
    waited on a dialog (3 s slower, records incomplete) are left out, so a.test under 4g stays
    "no difference", as ``compare`` over one contributor's own store has it; kept on request.
    Until 2026-11-30 ``compare --dataset`` took them, and printed h3 slower."""
    data = make_dataset(tmp_path, incomplete=4)
    domain, net, _ = INCOMPLETE_CELL

    def cell(*extra: str) -> dict[str, object]:
        res = cli("compare", "--dataset", str(data), "--source", "experiment", "--json", *extra)
        return next(r for r in json.loads(res.stdout)
                    if (r["group"], r["condition"]) == (domain, net))

    left = cell()
    assert left["n_a"] == left["n_b"] == 36 and not left["significant"], left
    kept = cell("--include-incomplete")
    assert kept["n_a"] == 36 and kept["n_b"] == 36 + 6 * 4, kept
    assert kept["significant"] and str(kept["verdict"]).startswith("h2 faster"), kept
    table = cli("compare", "--dataset", str(data), "--source", "experiment")
    assert "24 incomplete load(s) left out (--include-incomplete keeps them)" in table.stderr
    # one contributor's own store, by compare's Python reading of the same rule (a store's cells
    # are not split by network type: the domain's 4g and 3g loads, 6 each, per arm)
    own = cli("compare", "--db", str(tmp_path / "vol-0.db"), "--source", "experiment", "--json")
    (mine,) = [r for r in json.loads(own.stdout) if r["group"] == domain]
    assert mine["n_a"] == mine["n_b"] == 12, mine


def test_a_dataset_of_bundles_without_the_incomplete_flag_counts_them_complete(
        tmp_path: Path) -> None:
    """Bundles from before schema 5 have no ``incomplete`` column: their loads are complete, as
    record/comparable.py counts a null flag (the view adds the column, store/dataset.py connect),
    in DuckDB's cells and in the count the command prints."""
    import pyarrow.parquet as pq

    data = make_dataset(tmp_path, contributors=3, per_cell=4, incomplete=2)
    for path in (data / "dataset").glob("table=navigations/*/*.parquet"):
        table = pq.read_table(path, partitioning=None)
        pq.write_table(table.drop_columns(["incomplete"]), path)
    res = cli("compare", "--dataset", str(data), "--source", "experiment", "--json")
    cell = next(r for r in json.loads(res.stdout)
                if (r["group"], r["condition"]) == INCOMPLETE_CELL[:2])
    assert cell["n_b"] == 3 * (4 + 2) and "incomplete" not in res.stderr, (cell, res.stderr)


def _copy_under(data: Path, source: str, other: str) -> None:
    """The files of contributor ``source`` written again as ``other``'s (another bundle name):
    what a dataset holds when one volunteer's loads were accepted under two tokens."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in list((data / "dataset").glob("table=*/*/*.parquet")):
        table = pq.read_table(path, partitioning=None)
        if table.num_rows == 0 or table.column("contributor")[0].as_py() != source:
            continue
        cols = {n: table.column(n) for n in table.column_names}
        cols["contributor"] = pa.array([other] * table.num_rows)
        cols["bundle"] = pa.array(["f" * 64] * table.num_rows)
        pq.write_table(pa.table(cols), path.with_name("f" * 64 + ".parquet"))


def test_a_navigation_counts_once_whoever_uploaded_its_copies(tmp_path: Path) -> None:
    data = make_dataset(tmp_path, contributors=1, per_cell=6)
    _copy_under(data, "vol-0", "vol-copy")
    assert len(compare_rows(data, source="experiment")) == 2 * 2 * 2 * 6
    res = cli("compare", "--dataset", str(data), "--source", "experiment", "--json")
    for r in json.loads(res.stdout):
        assert r["contributors"] == 1 and r["ci_low_ms"] is None and not r["significant"]
        assert r["verdict"] == "all 12 loads come from one contributor: no interval across " \
                               "contributors"
