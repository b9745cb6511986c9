"""The visual metrics (issue 10, section 2) flow like PLT: validated at the JSON boundary, stored
through the column table, read back, and used by compare --metric speed_index, report and plot."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.lab.report import report_rows
from protolens.plots import figures
from protolens.record import RecordError, parse_record
from protolens.record.columns import VISUAL_MILESTONES
from protolens.store import lab as labstore
from protolens.store import open_ro, open_rw
from protolens.store.compare import plot_navigations
from protolens.store.records import load_record
from scripts.devkit.navrecord_builder import make_record
from scripts.devkit.store_builder import NOW_MS, ingest_all, lab_record


def _visual(rec: dict[str, Any], si: float | None) -> dict[str, Any]:
    m = rec["milestones"]
    if si is None:
        for name in VISUAL_MILESTONES:
            m[name] = None
        return rec
    m.update(first_visual_change_ms=si * 0.5, speed_index_ms=si, visual_complete_85_ms=si * 1.4,
             visual_complete_99_ms=si * 1.5, last_visual_change_ms=si * 1.6)
    return rec


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One page, two conditions, h1/h2: under ``lossy`` h2's SpeedIndex is 900 ms worse while its
    PLT is the same; a few loads of each cell were recorded without paint capture."""
    db = tmp_path_factory.mktemp("visual") / "s.db"
    rng = np.random.default_rng(3)
    recs, i = [], 0
    for cond in ("clean", "lossy"):
        for arm in ("h1", "h2"):
            for rep in range(10):
                plt = 2000.0 + rng.normal(0, 40)
                si = 900.0 + rng.normal(0, 30) + (900.0 if cond == "lossy" and arm == "h2" else 0)
                recs.append(_visual(lab_record(50_000 + i, "vis", "page", cond, arm, rep, plt),
                                    None if rep >= 8 else si))
                i += 1
    ingest_all(db, recs)
    with closing(open_rw(db, NOW_MS)) as conn:
        labstore.ensure_campaign(conn, "vis", seed=1, spec={}, version="test", now_ms=NOW_MS)
    return db


def test_a_record_without_them_is_valid_and_bad_values_are_refused() -> None:
    rec = make_record(seed=1)
    for name in VISUAL_MILESTONES:
        rec["milestones"].pop(name, None)
    assert parse_record(rec).milestones.speed_index_ms is None
    negative = make_record(seed=1)
    negative["milestones"]["speed_index_ms"] = -5.0
    with pytest.raises(RecordError, match=r"milestones.speed_index_ms: expected number in \[0"):
        parse_record(negative)
    bad = make_record(seed=1)
    bad["milestones"]["visual_complete_99_ms"] = "soon"
    with pytest.raises(RecordError, match="milestones.visual_complete_99_ms"):
        parse_record(bad)


def test_they_are_stored_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    rec = _visual(make_record(seed=2, source="lab"), 812.5)
    ingest_all(db, [rec])
    with closing(open_ro(db)) as conn:
        back = load_record(conn, rec["id"])
    assert back.milestones.speed_index_ms == 812.5
    assert back.milestones.last_visual_change_ms == 812.5 * 1.6
    assert back.milestones == parse_record(rec).milestones


def test_compare_speed_index_finds_what_plt_does_not(store: Path) -> None:
    def run(metric: str) -> dict[tuple[str, str], dict[str, Any]]:
        res = CliRunner().invoke(main, ["compare", "--campaign", "vis", "--db", str(store),
                                        "--metric", metric, "--json"])
        assert res.exit_code == 0, res.output
        return {(r["condition"], r["arm_a"]): r for r in json.loads(res.output)}

    si = run("speed_index")
    assert si[("lossy", "h1")]["verdict"].startswith("h1 faster by")
    assert si[("lossy", "h1")]["diff_ms"] == pytest.approx(-900, abs=60)
    assert (si[("lossy", "h1")]["n_a"], si[("lossy", "h1")]["n_b"]) == (8, 8)  # null ones left out
    assert si[("lossy", "h1")]["metric"] == "speed_index"
    assert not si[("clean", "h1")]["significant"]
    assert not run("plt")[("lossy", "h1")]["significant"]


def test_compare_speed_index_of_loads_without_it_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ingest_all(db, [_visual(lab_record(60_000 + i, "old", "p", "c", arm, i, 1000.0), None)
                    for i, arm in enumerate(("h1", "h2", "h1", "h2"))])
    res = CliRunner().invoke(main, ["compare", "--campaign", "old", "--db", str(db),
                                    "--metric", "speed_index"])
    assert res.exit_code == 2
    assert "0 loads with a speed_index value" in res.output
    assert "Traceback" not in res.output


def test_report_has_speed_index_medians_and_ratio_to_h2(store: Path) -> None:
    with closing(open_ro(store)) as conn:
        rows = {(r["condition"], r["arm"]): r
                for r in report_rows(labstore.campaign_navigations(conn, "vis"))}
    lossy_h1 = rows[("lossy", "h1")]
    assert lossy_h1["speed_index_median_ms"] == pytest.approx(900, abs=40)
    assert lossy_h1["speed_index_ratio_to_h2"] == pytest.approx(0.5, abs=0.04)
    assert lossy_h1["first_visual_change_median_ms"] == pytest.approx(450, abs=20)
    assert rows[("clean", "h2")]["speed_index_ratio_to_h2"] == 1.0
    res = CliRunner().invoke(main, ["report", "--campaign", "vis", "--db", str(store)])
    assert res.exit_code == 0, res.output
    assert "speed_index_median_ms" in res.output


def test_plots_draw_the_speed_index(store: Path, tmp_path: Path) -> None:
    with closing(open_ro(store)) as conn:
        rows = plot_navigations(conn, "vis", metric="speed_index")
        assert "speed_index_ms" not in plot_navigations(conn, "vis")[0]
    fig = figures.plt_box(rows, "t", "speed_index")
    assert fig.axes[0].get_ylabel() == "SpeedIndex (s)"
    deltas = figures.page_deltas(rows, "h2", "h1", "speed_index")
    (page, a, b, _), = deltas["lossy"]
    assert (page, round((a - b) / 100)) == ("page", 9)
    assert figures.delta_cdf(rows, "h2", "h1", "t", "speed_index").axes[0].get_xlabel() \
        .startswith("SI(h2) - SI(h1)")
    out = tmp_path / "si.png"
    res = CliRunner().invoke(main, ["plot", "speedup", "--campaign", "vis", "--db", str(store),
                                    "--arms", "h2,h1", "--metric", "speed_index", "--out",
                                    str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(b"\x89PNG")
    bad = CliRunner().invoke(main, ["plot", "byte-shares", "--campaign", "vis", "--db",
                                    str(store), "--metric", "speed_index", "--out", str(out)])
    assert bad.exit_code == 2 and "--metric applies to" in bad.output
    with pytest.raises(figures.PlotError, match="no successful loads with a SI"):
        figures.plt_box([{**r, "speed_index_ms": None} for r in rows], "t", "speed_index")
