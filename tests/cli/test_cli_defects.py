"""Small things a user trips on, each through the real CLI on a real store: a bad option value is
one line, a damaged store is called corrupt (with the backup hint, by ``doctor`` too), and JSON
floats carry what was measured, not binary noise."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.cli.output import rounded
from scripts.devkit.store_builder import campaign_store, ingest_all, lab_record


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("argv,names", [
    (["navigations", "--last", "0"], "--last"),
    (["compare", "--metric", "foo", "--campaign", "x"], "--metric"),
    (["lab", "run", "--reps", "0"], "--reps"),
    (["db", "stats", "--bogus"], "--bogus"),
    (["show"], "ID"),
    (["nosuch"], "nosuch"),
    (["--bogus"], "--bogus"),
])
def test_a_bad_option_value_is_one_line(tmp_path: Path, argv: list[str], names: str) -> None:
    code, out, err = run(*argv, "--db", str(tmp_path / "x.db")) if argv[0] in (
        "navigations",) else run(*argv)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and names in err, err
    assert "Usage:" not in err + out and "Try '" not in err


def _damage(db: Path) -> None:
    """Overwrite pages in the middle of the file (past the header and the schema)."""
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    for p in range(3, len(data) // page - 1, 2):
        data[p * page + 8:p * page + 200] = b"\xa5" * 192
    db.write_bytes(bytes(data))


def test_a_damaged_store_is_called_corrupt_with_the_backup_hint(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=8)
    _damage(db)
    code, _, err = run("compare", "--campaign", "camp", "--db", str(db))
    assert code == 2 and err.count("\n") == 1, err
    assert "corrupt" in err and "backup" in err and "db migrate" not in err
    code, out, _ = run("doctor", "--no-probe", "--json", env={"PROTOLENS_DB": str(db)})
    store = next(c for c in json.loads(out) if c["check"] == "store")
    assert code == 1 and store["status"] == "fail" and "corrupt" in store["detail"]
    assert "quick_check" in store["detail"] and "backup" in store["fix"]
    assert "migrate" not in store["fix"]


def test_a_sound_store_is_ok_for_doctor(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=2)
    _, out, _ = run("doctor", "--no-probe", "--json", env={"PROTOLENS_DB": str(db)})
    store = next(c for c in json.loads(out) if c["check"] == "store")
    assert store["status"] == "ok" and "navigations" in store["detail"]


def test_json_floats_are_rounded_to_what_was_measured() -> None:
    assert rounded({"diff_ms": -48.774000000000015, "p_value": 1.2345678901234567e-7,
                    "share": 0.30000000000000004, "rows": [{"plt_ms": 0.1 + 0.2}],
                    "n": 3, "ok": True, "none": None}) == {
        "diff_ms": -48.774, "p_value": 1.23456789012e-07, "share": 0.3,
        "rows": [{"plt_ms": 0.3}], "n": 3, "ok": True, "none": None}
    assert rounded({"x_ms": -0.0001}) == {"x_ms": 0.0}


def test_compare_json_has_no_binary_noise(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    a, b = [1000.1, 1010.1, 1020.1, 1030.1], [951.326, 961.326, 971.326, 981.326]
    ingest_all(db, [lab_record(i, "camp", "p", "c", arm, i, v)
                    for i, (arm, v) in enumerate([*(("h1", x) for x in a),
                                                  *(("h2", x) for x in b)])])
    code, out, err = run("compare", "--campaign", "camp", "--db", str(db), "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["diff_ms"] == 48.774
    for key, value in row.items():  # before: 48.77399999999989
        if key.endswith("_ms") and isinstance(value, float):
            assert value == round(value, 3), (key, value)
    assert not re.search(r"_ms\": -?\d+\.\d{4,}", out), out


def test_the_extra_a_command_needs() -> None:
    from protolens.cli.extras import extra_for, message

    assert extra_for("compare", "scipy.special") == "research"
    assert extra_for("lab", "numpy") == "lab"  # lab brings research with it
    assert extra_for("collector", "pyarrow") == "collector"
    assert extra_for("compare", "pyspark") == "spark"
    assert extra_for("contribute", "pyarrow") == "research"
    assert extra_for("compare", "protolens.nothing") is None  # a bug, not an install choice
    assert message("protolens compare", "research") == \
        "protolens compare needs the research extra: pip install 'protolens[research]'"


def test_compare_refuses_a_zero_width_interval_in_one_line(tmp_path: Path) -> None:
    """Copies of one load (every value the same in each arm) give an interval of zero width:
    an error, not "h2 faster by 235 ms [235, 235]"."""
    db = tmp_path / "s.db"
    ingest_all(db, [lab_record(i, "camp", "p", "c", "h2" if i % 2 else "h3", i,
                               335.0 if i % 2 else 100.0) for i in range(8)])
    code, out, err = run("compare", "--campaign", "camp", "--db", str(db), "--json")
    assert code == 2 and err.count("\n") == 1 and "zero-width interval" in err, err
    (row,) = json.loads(out)
    assert row["outcome"] == "error" and row["ci_low_ms"] is None and not row["significant"]


def test_a_relative_store_path_is_made_absolute_for_every_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab's native host runs in Chromium's profile folder: a relative ``--db`` or
    ``$PROTOLENS_DB`` handed to it as typed put the records in that folder, and ``lab run`` waited
    for them in the user's (the e2e twin: tests/e2e/test_log_tap_e2e.py)."""
    from protolens.cli.db import db_path
    monkeypatch.chdir(tmp_path)
    assert db_path(Path("s.db")) == tmp_path / "s.db"
    monkeypatch.setenv("PROTOLENS_DB", "sub/t.db")
    assert db_path(None) == tmp_path / "sub" / "t.db"
    assert db_path(Path("/abs/x.db")) == Path("/abs/x.db")
