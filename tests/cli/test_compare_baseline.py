"""``protolens compare --baseline`` on real SQLite stores: two campaigns of one store and two
stores, the regression gate's exit codes, --json/--csv, and the one-line errors (an unknown
campaign, a store without the campaign, no cell in common). The loads are built records
(``scripts/devkit/navrecord_builder.py``) with chosen load times: a slower profile is a shift
of the current side's values."""

from __future__ import annotations

import csv
import io
import json
import time
import uuid
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.record.validate import parse_record
from protolens.store import ingest, open_rw
from protolens.store import lab as labstore
from scripts.devkit.navrecord_builder import make_record

RNG = np.random.default_rng(11)


def add_campaign(db: Path, name: str, plts: dict[tuple[str, str, str], list[float]]) -> None:
    with closing(open_rw(db, time.time() * 1000)) as conn:
        labstore.ensure_campaign(conn, name, seed=1, spec={}, version="t", now_ms=0.0)
        for (page, arm, cond), values in plts.items():
            for rep, plt in enumerate(values, 1):  # a record's id comes from its seed
                rec = make_record(n_requests=3, seed=uuid.uuid4().int % 2**31, family="h2",
                                  source="lab")
                rec["milestones"]["load_ms"] = float(plt)
                ingest(conn, parse_record(rec), {
                    "campaign": name, "arm": arm, "condition": cond, "repetition": rep,
                    "page": page, "load_id": str(uuid.uuid4())}, now_ms=0.0)


def values(mean: float) -> list[float]:
    return list(mean + RNG.normal(0, 25, 12))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    add_campaign(path, "base", {("p", "h2", "wifi"): values(1000), ("q", "h2", "wifi"):
                                values(2000)})
    add_campaign(path, "same", {("p", "h2", "wifi"): values(1000), ("q", "h2", "wifi"):
                                values(2000)})
    add_campaign(path, "slow", {("p", "h2", "wifi"): values(1250), ("q", "h2", "wifi"):
                                values(2000)})
    return path


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["compare", *args])
    return r.exit_code, r.stdout, r.stderr


def test_a_slowdown_is_found_in_its_cell_only(db: Path) -> None:
    code, out, _ = run("--baseline", "base", "--campaign", "slow", "--db", str(db), "--json")
    assert code == 0
    rows = {r["group"]: r for r in json.loads(out)}
    assert rows["p"]["outcome"] == "above" and 20 < rows["p"]["change_pct"] < 30
    assert rows["q"]["outcome"] == "overlaps"


def test_two_runs_of_the_same_condition_show_no_change(db: Path) -> None:
    code, out, _ = run("--baseline", "base", "--campaign", "same", "--db", str(db), "--csv",
                       "--fail-on-regression", "0")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["outcome"] for r in rows] == ["overlaps", "overlaps"]


@pytest.mark.parametrize(("pct", "code"), [("10", 1), ("40", 0)])
def test_fail_on_regression_exits_1_only_when_surely_over(db: Path, pct: str,
                                                           code: int) -> None:
    got, _, err = run("--baseline", "base", "--campaign", "slow", "--db", str(db),
                      "--fail-on-regression", pct)
    assert got == code, err
    assert ("regression: p / h2 / wifi" in err) == (code == 1)


def test_two_stores(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    add_campaign(other, "slow", {("p", "h2", "wifi"): values(1000)})
    code, out, err = run("--baseline-db", str(other), "--campaign", "slow", "--db", str(db),
                         "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["group"] == "p" and row["outcome"] == "above"  # db's slow against other's
    assert "1 cell(s) not compared: only in the current: q / h2 / wifi" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--baseline", "nope", "--campaign", "slow"], "baseline: no navigations of campaign 'nope'"),
    (["--baseline", "base", "--campaign", "nope"], "current: no navigations of campaign 'nope'"),
    (["--baseline", "base"], "give exactly one of --campaign"),
    (["--baseline", "base", "--campaign", "base"], "the baseline is the current data itself"),
    (["--campaign", "slow", "--fail-on-regression", "5"], "needs a baseline"),
    (["--baseline", "base", "--campaign", "slow", "--bundle", "x.tar"], "not with --bundle"),
])
def test_bad_inputs_are_one_line(db: Path, args: list[str], message: str) -> None:
    code, out, err = run(*args, "--db", str(db))
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_store_without_the_campaign_or_no_common_cell_is_one_line(db: Path,
                                                                  tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    add_campaign(other, "x", {("r", "h3", "cell-poor"): values(1000)})
    code, _, err = run("--baseline-db", str(other), "--campaign", "slow", "--db", str(db))
    assert code == 2 and "baseline: no navigations of campaign 'slow'" in err
    assert "(known: x)" in err
    code, _, err = run("--baseline", "x", "--baseline-db", str(other), "--campaign", "slow",
                       "--db", str(db))
    assert code == 2 and "no cell (page x arm x condition) in common" in err
    assert "r / h3 / cell-poor" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("--baseline-db", str(tmp_path / "missing.db"), "--campaign", "slow",
                       "--db", str(db))
    assert code == 2 and "no such file" in err


def test_plot_delta_cdf_against_a_baseline_draws_each_page_arm_cells_change(
        db: Path, tmp_path: Path) -> None:
    from protolens.plots import figures
    from protolens.store import open_ro
    from protolens.store.compare import plot_navigations

    with closing(open_ro(db)) as conn:
        base, slow = (plot_navigations(conn, name) for name in ("base", "slow"))
    fig = figures.delta_cdf(figures.baseline_rows(base, slow), "current", "baseline", "t")
    (line,) = [ln for ln in fig.axes[0].lines if not str(ln.get_label()).startswith("_")]
    assert str(line.get_label()) == "wifi (2 pages)"
    q, p = sorted(line.get_xdata()[1:])  # seconds: q unchanged, p 250 ms slower
    assert abs(q) < 0.05 and 0.2 < p < 0.3
    out = tmp_path / "d.svg"
    r = CliRunner().invoke(main, ["plot", "delta-cdf", "--baseline", "base", "--campaign",
                                  "slow", "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("<?xml")
    r = CliRunner().invoke(main, ["plot", "speedup", "--baseline", "base", "--campaign",
                                  "slow", "--db", str(db), "--out", str(tmp_path / "s.svg")])
    assert r.exit_code == 2 and "--baseline applies to delta-cdf only" in r.output


def test_everyday_browsing_of_two_stores(tmp_path: Path) -> None:
    def store(path: Path, mean: float) -> Path:
        with closing(open_rw(path, time.time() * 1000)) as conn:
            for plt in values(mean):
                rec = make_record(n_requests=3, seed=uuid.uuid4().int % 2**31, family="h2",
                                  source="passive")
                rec["milestones"]["load_ms"] = float(plt)
                ingest(conn, parse_record(rec), {}, now_ms=0.0)
        return path

    before, after = store(tmp_path / "b.db", 1000), store(tmp_path / "a.db", 1400)
    code, out, err = run("--baseline-db", str(before), "--source", "passive", "--db",
                         str(after), "--json", "--fail-on-regression", "20")
    assert code == 1, err
    (row,) = json.loads(out)
    assert (row["arm"], row["condition"], row["outcome"]) == ("h2", "all", "above")
