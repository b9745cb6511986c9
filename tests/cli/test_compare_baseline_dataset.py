"""``protolens compare --baseline-dataset``: a collector's pooled Parquet dataset as the baseline
side. Everything is real: lab records (``scripts/devkit/store_builder.py``) ingested into SQLite
stores, exported anonymized as a volunteer would and stored by the collector's own ``accept``
(``tests/collector/dataset_builder.py``), read back by DuckDB. A slower network is the same
loads with every timing scaled by 1.3.

Cost: about 5 s (four small stores, three collector uploads, DuckDB scans); no browser."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.collector.dataset import dataset_files
from protolens.research.baseline_dataset import shared_cell
from scripts.devkit.store_builder import ingest_all, lab_record
from tests.collector.dataset_builder import contribute

REPS = 8
ALLOW = frozenset({"a.test"})
CELLS = [  # page tag, origin host, condition, arm, median PLT
    ("student-small", "a.test", "wifi", "h2", 1000.0),
    ("student-small", "a.test", "wifi", "h3", 900.0),
    ("student-large", "a.test", "wifi", "h2", 3000.0),
    ("student-large", "a.test", "wifi", "h3", 2800.0),
    ("https://a.test/shop", "a.test", "wifi", "h2", 1500.0),  # a real URL: a.test allow-listed
    ("https://c.test/news", "c.test", "wifi", "h2", 1200.0),  # a real URL, host anonymized
    ("student-small", "a.test", "my-profile", "h2", 1100.0),  # a condition of the user's own
]
COMPARED = {("student-small", "h2", "wifi"), ("student-small", "h3", "wifi"),
            ("student-large", "h2", "wifi"), ("student-large", "h3", "wifi"),
            ("a.test", "h2", "wifi")}
"""The cells both sides have: a URL's page tag is a pseudonym in the dataset, so its loads are
matched on the host of its origin, and only when the host is allow-listed."""


def store(db: Path, campaign: str, seed0: int, scale: float = 1.0, shift: float = 0.0) -> Path:
    rng = np.random.default_rng(seed0)
    recs: list[dict[str, Any]] = []
    for page, host, cond, arm, plt in CELLS:
        for rep in range(REPS):
            value = (plt + shift + rng.normal(0, 30)) * scale
            recs.append(lab_record(seed0 + len(recs), campaign, page, cond, arm, rep, value,
                                   n_requests=3, origin_host=host))
    ingest_all(db, recs)
    return db


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``lab.db`` (campaign ``base``), the dataset of its loads alone (``one``: the campaign's
    name a pseudonym), ``slow.db`` (campaign ``after``: the same loads 1.3 times slower), and a
    dataset of ``lab.db`` (name kept in clear) with another volunteer's slower campaign
    (``two``)."""
    tmp = tmp_path_factory.mktemp("dsbase")
    lab = store(tmp / "lab.db", "base", 10_000)
    slow = store(tmp / "slow.db", "after", 10_000, scale=1.3)
    other = store(tmp / "other.db", "private-run", 50_000, shift=600.0)
    contribute(tmp / "one", lab, "lab-1", allow=ALLOW)
    contribute(tmp / "two", lab, "lab-1", allow=ALLOW, keep_campaigns=frozenset({"base"}))
    contribute(tmp / "two", other, "vol-2", allow=ALLOW)
    return {"lab": lab, "slow": slow, "one": tmp / "one", "two": tmp / "two", "tmp": tmp}


def run(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["compare", *map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def cells(out: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["group"], r["arm"], r["condition"]): r for r in json.loads(out)}


def test_a_dataset_of_a_stores_loads_against_that_store_shows_no_change(
        sides: dict[str, Path]) -> None:
    code, out, err = run("--baseline-dataset", sides["one"], "--campaign", "base", "--db",
                         sides["lab"], "--json", "--fail-on-regression", "0")
    assert code == 0, err
    got = cells(out)
    assert set(got) == COMPARED
    for row in got.values():
        assert row["n_baseline"] == row["n_current"] == REPS
        assert row["median_baseline_ms"] == row["median_current_ms"]
        assert row["change_ms"] == 0 and row["outcome"] == "overlaps", row
    # the anonymized host's and the user's own condition's cells are named, not compared
    assert "4 cell(s) not compared" in err
    assert "student-small / h2 / anon-" in err and "c.test / h2 / wifi" in err


def test_a_dataset_against_slower_loads_finds_the_slowdown_in_every_cell(
        sides: dict[str, Path]) -> None:
    code, out, err = run("--baseline-dataset", sides["one"], "--campaign", "after", "--db",
                         sides["slow"], "--csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {(r["group"], r["arm"], r["condition"]) for r in rows} == COMPARED
    for r in rows:
        assert r["outcome"] == "above" and 25 < float(r["change_pct"]) < 35, r
        assert float(r["ci_low_pct"]) > 10
    code, out, err = run("--baseline-dataset", sides["one"], "--campaign", "after", "--db",
                         sides["slow"], "--metric", "speed_index", "--json")
    assert code == 0, err
    assert {r["outcome"] for r in json.loads(out)} == {"above"}


@pytest.mark.parametrize(("pct", "code"), [("10", 1), ("50", 0)])
def test_fail_on_regression_against_a_dataset(sides: dict[str, Path], pct: str,
                                              code: int) -> None:
    got, _, err = run("--baseline-dataset", sides["one"], "--campaign", "after", "--db",
                      sides["slow"], "--fail-on-regression", pct)
    assert got == code, err
    lines = [ln for ln in err.splitlines() if ln.startswith("regression: ")]
    assert len(lines) == (len(COMPARED) if code else 0)
    if code:
        assert "regression: a.test / h2 / wifi: +" in err


def test_baseline_narrows_to_a_campaign_the_dataset_carries_in_clear(
        sides: dict[str, Path]) -> None:
    code, out, err = run("--baseline-dataset", sides["two"], "--baseline", "base",
                         "--campaign", "base", "--db", sides["lab"], "--json")
    assert code == 0, err
    assert {r["change_ms"] for r in cells(out).values()} == {0}
    # without --baseline: every lab load of the dataset, the other volunteer's slower ones too
    code, out, err = run("--baseline-dataset", sides["two"], "--campaign", "base", "--db",
                         sides["lab"], "--json")
    assert code == 0, err
    pooled = cells(out)
    assert set(pooled) == COMPARED
    for r in pooled.values():  # half the baseline's loads are 600 ms slower: its median moves
        assert r["n_baseline"] == 2 * REPS and r["n_current"] == REPS
        assert r["median_baseline_ms"] > r["median_current_ms"] + 150
    code, _, err = run("--baseline-dataset", sides["two"], "--baseline", "private-run",
                       "--campaign", "base", "--db", sides["lab"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "no navigations of campaign 'private-run'" in err
    assert "campaigns in clear: base;" in err


def test_bad_inputs_are_one_line_and_change_nothing(sides: dict[str, Path]) -> None:
    tmp = sides["tmp"]
    (tmp / "empty").mkdir(exist_ok=True)
    odd = tmp / "odd.db"
    before = dataset_files(sides["one"])
    cases: list[tuple[list[str | Path], str]] = [
        (["--baseline-dataset", tmp / "empty", "--campaign", "base"],
         "no collector dataset here"),
        (["--baseline-dataset", sides["lab"], "--campaign", "base"], "not a directory"),
        (["--baseline-dataset", tmp / "missing", "--campaign", "base"], "no such directory"),
        (["--baseline-dataset", sides["one"], "--baseline-db", sides["lab"], "--campaign",
          "base"], "--baseline-dataset: not with --baseline-db"),
        (["--baseline-dataset", sides["one"], "--dataset", sides["one"], "--campaign", "base"],
         "not with --bundle, --dataset"),
        (["--baseline-dataset", sides["one"], "--baseline", "base", "--source", "passive"],
         "--baseline names a campaign"),
        (["--baseline-dataset", sides["one"], "--source", "passive"],
         "baseline: no passive loads in dataset"),
        (["--baseline-dataset", sides["one"], "--campaign", "nope"],
         "current: no navigations of campaign 'nope'"),
    ]
    for args, message in cases:
        code, out, err = run(*args, "--db", sides["lab"])
        assert code == 2 and out == "", (args, err)
        assert message in err and len(err.strip().splitlines()) == 1, (args, err)
    ingest_all(odd, [lab_record(99_000 + i, "odd", "student-medium", "wifi", "h2", i, 900.0,
                                origin_host="c.test") for i in range(REPS)])
    code, _, err = run("--baseline-dataset", sides["one"], "--campaign", "odd", "--db", odd)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "no cell (page x arm x condition) in common" in err
    assert "a host only when the contributor allow-listed it" in err
    assert dataset_files(sides["one"]) == before


def test_the_shared_cell_key() -> None:
    assert shared_cell({"page": "student-small", "origin": "https://a.test"})["page"] == \
        "student-small"
    assert shared_cell({"page": "custom-20x100k", "origin": "https://a.test"})["page"] == \
        "custom-20x100k"
    assert shared_cell({"page": "https://a.test/x?q=1", "origin": "https://a.test:8443"}
                       )["page"] == "a.test"
    assert shared_cell({"page": "anon-0123456789abcdef", "origin": "https://anon-fedcba"}
                       )["page"] == "anon-fedcba"
    assert shared_cell({"page": None, "origin": "https://a.test"})["page"] is None


def test_a_damaged_current_store_is_named_not_the_baseline(sides: dict[str, Path]) -> None:
    bad = sides["tmp"] / "damaged.db"
    bad.write_bytes(b"not a database " * 100)
    for baseline in (["--baseline-dataset", sides["one"]], ["--baseline-db", sides["lab"]]):
        code, out, err = run(*baseline, "--campaign", "base", "--db", bad)
        assert code == 2 and out == "", err
        assert err.startswith(f"error: {bad}: the store is corrupt"), err
