"""Campaign report from a real SQLite store: medians, IQR, ratio to h2, connections per host."""

from __future__ import annotations

import json
import re
import time
import uuid
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.lab.report import report_rows
from protolens.record.validate import parse_record
from protolens.store import ingest, open_rw
from protolens.store import lab as labstore
from scripts.devkit.navrecord_builder import make_record

PLT = {"h1": [100.0, 110.0, 120.0, 130.0], "h2": [200.0, 210.0, 220.0, 400.0], "h3": [150.0]}


def seeded_store(path: Path) -> Path:
    with closing(open_rw(path, time.time() * 1000)) as conn:
        labstore.ensure_campaign(conn, "c1", seed=1, spec={"arms": list(PLT)}, version="t",
                                 now_ms=0.0)
        seed = 0
        for arm, values in PLT.items():
            for rep, plt in enumerate(values, 1):
                seed += 1
                rec = make_record(n_requests=7, seed=seed, family=arm, source="lab")
                rec["milestones"]["load_ms"] = plt
                ctx = {"campaign": "c1", "arm": arm, "condition": "wifi", "repetition": rep,
                       "page": "p1", "load_id": str(uuid.uuid4())}
                ingest(conn, parse_record(rec), ctx, now_ms=0.0)
    return path


def test_report_rows_from_the_store(tmp_path: Path) -> None:
    db = seeded_store(tmp_path / "s.db")
    with closing(open_rw(db, time.time() * 1000)) as conn:
        rows = {r["arm"]: r for r in report_rows(labstore.campaign_navigations(conn, "c1"))}
    assert {a: r["n"] for a, r in rows.items()} == {"h1": 4, "h2": 4, "h3": 1}
    for arm, values in PLT.items():
        assert rows[arm]["plt_median_ms"] == pytest.approx(float(np.median(values)))
        assert rows[arm]["plt_p25_ms"] == pytest.approx(float(np.percentile(values, 25)))
        assert rows[arm]["plt_p75_ms"] == pytest.approx(float(np.percentile(values, 75)))
    assert rows["h2"]["plt_ratio_to_h2"] == pytest.approx(1.0)
    assert rows["h1"]["plt_ratio_to_h2"] == pytest.approx(115.0 / 215.0)
    for arm in ("h1", "h2"):
        rec = make_record(n_requests=7, seed=1, family=arm, source="lab")
        expected: dict[str, set[int]] = {}
        for req in rec["requests"]:
            expected.setdefault(req["host"], set()).add(req["connection_id"])
        assert rows[arm]["connections_per_host"] == {h: len(c) for h, c in expected.items()}
    assert rows["h1"]["connections_per_host"]["a.test"] > 1
    # the verdict against h2 is compare's (the one rule): 4 loads per arm decide, 1 cannot
    assert rows["h1"]["plt_vs_h2"] == "h1 faster by 100 ms [70, 300]"  # every pair differs
    assert rows["h3"]["plt_vs_h2"] == "too few loads to decide (needs n ≥ 4 per arm)"
    assert rows["h2"]["plt_vs_h2"] is None


def test_report_table_shows_connections_per_host_as_words_not_json(tmp_path: Path) -> None:
    db = seeded_store(tmp_path / "s.db")
    for fmt in ([], ["--csv"]):
        out = CliRunner().invoke(main, ["report", "--campaign", "c1", "--db", str(db), *fmt])
        assert out.exit_code == 0, out.output
        assert "a.test: " in out.output
        assert '{"a.test"' not in out.output and '"a.test":' not in out.output


def test_an_even_n_of_equal_counts_reads_as_a_count(tmp_path: Path) -> None:
    """4 loads per cell (the demo's) of a page that opened 6 connections each: "a.test: 6", as 3
    loads read, not "6.000"; two middle counts apart read as their midpoint."""
    from protolens.lab.report import _count_median
    assert _count_median([6, 6, 6, 6]) == 6 and isinstance(_count_median([6, 6, 6, 6]), int)
    assert _count_median([5, 6, 6, 6]) == 6 and isinstance(_count_median([5, 6, 6, 6]), int)
    assert _count_median([5, 5, 6, 6]) == 5.5
    db = seeded_store(tmp_path / "s.db")  # 4 loads of h1 and h2: even n
    out = CliRunner().invoke(main, ["report", "--campaign", "c1", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert re.search(r"a\.test: \d+,", out.output) and not re.search(r"\.test: \d+\.\d",
                                                                        out.output), out.output


def test_report_cli_json_has_the_contract_fields(tmp_path: Path) -> None:
    db = seeded_store(tmp_path / "s.db")
    out = CliRunner().invoke(main, ["report", "--campaign", "c1", "--json", "--db", str(db)])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert len(rows) == 3
    for row in rows:
        assert {"page", "condition", "arm", "n", "plt_median_ms", "plt_p25_ms",
                "plt_p75_ms"} <= row.keys()


def test_report_unknown_campaign_is_a_one_line_error(tmp_path: Path) -> None:
    db = seeded_store(tmp_path / "s.db")
    out = CliRunner().invoke(main, ["report", "--campaign", "nope", "--db", str(db)])
    assert out.exit_code == 2
    assert "no campaign named 'nope'" in out.output
    assert len(out.output.strip().splitlines()) == 1


REAL = "https://example.org/"


@pytest.mark.parametrize(("args", "message"), [
    (["--pages", "no-such-page"], "unknown page no-such-page"),
    (["--pages", "student-small", "--arms", "h1,h9"], "unknown arm h9"),
    (["--pages", "student-small", "--conditions", "marsnet"], "unknown profile 'marsnet'"),
    (["--pages", "student-small", "--chromium", "/nope/chromium"], "no browser at /nope"),
    # real sites (never reached: every one of these is refused before anything starts)
    ([REAL, "--conditions", "none,wifi"], "cannot be mixed with shaper profiles"),
    ([REAL, "--conditions", "ecmp-congested"], "cannot apply to real sites"),
    ([REAL, "--conditions", "marsnet"], "unknown profile 'marsnet'"),
    ([REAL, "--conditions", "wifi", "--ca", "/nope/ca.pem"], "--ca /nope/ca.pem: no such file"),
    ([REAL, "--bbr-host", "a.test"], "--bbr-host needs the testbed"),
    (["ftp://example.org/"], "argument: not an http(s) URL: 'ftp://example.org/'"),
    ([REAL, "--pages", "student-small"], "give either --pages"),
    (["--pages", "student-small", "--uplink", "eth0"], "apply to real sites"),
])
def test_lab_run_bad_arguments_start_nothing(tmp_path: Path, args: list[str],
                                              message: str) -> None:
    db = tmp_path / "never.db"
    out = CliRunner().invoke(main, ["lab", "run", *args, "--db", str(db)])
    assert out.exit_code == 2, out.output
    assert message in out.output
    assert len(out.output.strip().splitlines()) == 1
    assert not db.exists()


@pytest.mark.parametrize(("content", "message"), [
    (None, "No such file"),
    ("# only a comment\n\n", "no URLs in it"),
    ("ftp://example.org/\n", "not an http(s) URL: 'ftp://example.org/'"),
])
def test_urls_file_errors_are_one_line_and_start_nothing(tmp_path: Path, content: str | None,
                                                         message: str) -> None:
    urls = tmp_path / "urls.txt"
    if content is not None:
        urls.write_text(content)
    db = tmp_path / "never.db"
    out = CliRunner().invoke(main, ["lab", "run", "--urls", str(urls), "--conditions", "none",
                                    "--db", str(db)])
    assert out.exit_code == 2, out.output
    assert message in out.output
    assert len(out.output.strip().splitlines()) == 1
    assert not db.exists()


def test_reproduce_unknown_experiment_names_the_known_ones(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    out = CliRunner().invoke(main, ["lab", "reproduce", "nope", "--db", str(db)])
    assert out.exit_code == 2
    assert "unknown experiment 'nope'" in out.output and "ifip18-wifi" in out.output
    assert not db.exists()


def _store_with_incomplete(tmp_path: Path) -> Path:
    """The seeded store plus two h1 loads of p1 whose records are incomplete (one cut by the
    cap after load with a request unfinished, one that never fired its load event)."""
    db = seeded_store(tmp_path / "s.db")
    with closing(open_rw(db, time.time() * 1000)) as conn:
        cases = ((5, ["cap_after_load", "unfinished_requests"]), (6, ["no_load_event"]))
        for rep, reasons in cases:
            rec = make_record(n_requests=7, seed=100 + rep, family="h1", source="lab")
            rec["milestones"]["load_ms"] = 5000.0 if rep == 5 else None
            rec["page"].update(incomplete=True, incomplete_reasons=reasons, kind="navigation")
            ctx = {"campaign": "c1", "arm": "h1", "condition": "wifi", "repetition": rep,
                   "page": "p1", "load_id": str(uuid.uuid4())}
            ingest(conn, parse_record(rec), ctx, now_ms=0.0)
    return db


def test_report_leaves_incomplete_loads_out_and_counts_them(tmp_path: Path) -> None:
    db = _store_with_incomplete(tmp_path)
    with closing(open_rw(db, 0.0)) as conn:
        navs = labstore.campaign_navigations(conn, "c1")
        campaigns = labstore.campaigns(conn)
        cells = labstore.incomplete_cells(conn, "c1")
    h1 = next(r for r in report_rows(navs) if r["arm"] == "h1")
    assert (h1["n"], h1["incomplete"]) == (4, 2)
    assert h1["plt_median_ms"] == float(np.median(PLT["h1"]))  # the 5,000 ms load is not in it
    kept = next(r for r in report_rows(navs, include_incomplete=True) if r["arm"] == "h1")
    assert (kept["n"], kept["incomplete"]) == (6, 2)
    assert campaigns[0]["incomplete"] == 2
    assert [(c["arm"], c["incomplete"], c["navigations"]) for c in cells] == [("h1", 2, 6)]
    assert "no_load_event" in cells[0]["reasons"] and "cap_after_load" in cells[0]["reasons"]
    out = CliRunner().invoke(main, ["report", "--campaign", "c1", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "2 incomplete load(s) left out" in out.output


def test_compare_leaves_incomplete_loads_out_unless_asked(tmp_path: Path) -> None:
    from protolens.research.compare import Request, run

    db = _store_with_incomplete(tmp_path)
    out = run(Request(campaign="c1", arms=("h1", "h2")), db)
    kept = run(Request(campaign="c1", arms=("h1", "h2"), include_incomplete=True), db)
    assert (out.incomplete, kept.incomplete) == (2, 2)
    assert kept.loads - out.loads == 1  # the other one has no load time to compare
    cli = CliRunner().invoke(main, ["compare", "--campaign", "c1", "--db", str(db)])
    assert cli.exit_code == 0, cli.output
    assert "2 incomplete load(s) left out" in cli.output
