"""``testbed pages`` / ``testbed page`` through click, on a real corpus directory."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from protolens.cli.testbed_pages import page_cmd, pages_cmd
from protolens.pages import MANIFEST


def _run(cmd: object, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(cmd, list(args))  # type: ignore[arg-type]


@pytest.mark.parametrize(("cmd", "example"), [(pages_cmd, "protolens testbed pages --name"),
                                              (page_cmd, "protolens testbed page --objects")])
def test_help_has_an_example(cmd: object, example: str) -> None:
    result = _run(cmd, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output and example in result.output


def test_pages_builds_named_pages_and_prints_json(tmp_path: Path) -> None:
    result = _run(pages_cmd, "--root", str(tmp_path), "--name", "ifip18-wikipedia",
                  "--name", "mininet-10", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["name"] for r in rows] == ["ifip18-wikipedia", "mininet-10"]
    wiki, mini = rows
    assert wiki["status"] == "built"
    assert (wiki["html"], wiki["css"], wiki["js"], wiki["image"], wiki["other"]) == (1, 1, 2, 20, 1)
    assert wiki["objects"] == 24 and wiki["total_bytes"] == 441_000
    assert wiki["hosts"] == ["a.test", "b.test"]
    assert wiki["url"] == "https://a.test/ifip18-wikipedia/"
    assert wiki["dir"] == str(tmp_path / "ifip18-wikipedia")
    assert "Table I" in wiki["source"]
    assert mini["objects"] == 10 and mini["image"] == 10
    assert (tmp_path / "mininet-10" / MANIFEST).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ifip18-wikipedia", "mininet-10"]
    again = json.loads(_run(pages_cmd, "--root", str(tmp_path), "--name", "mininet-10",
                            "--json").output)
    assert again[0]["status"] == "cached"


def test_pages_list_builds_nothing(tmp_path: Path) -> None:
    _run(pages_cmd, "--root", str(tmp_path), "--name", "mininet-1")
    result = _run(pages_cmd, "--root", str(tmp_path), "--list", "--csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert len(rows) == 50
    status = {r["name"]: r["status"] for r in rows}
    assert status["mininet-1"] == "cached" and status["mininet-10"] == "missing"
    assert {r["name"]: r["hosts"] for r in rows}["ifip18-instagram"] == "a.test b.test c.test"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mininet-1"]


def test_pages_table_is_the_default(tmp_path: Path) -> None:
    result = _run(pages_cmd, "--root", str(tmp_path), "--name", "mininet-1")
    assert result.exit_code == 0
    assert "mininet-1" in result.output and "{" not in result.output


def test_default_root_is_under_the_data_home(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    result = _run(pages_cmd, "--name", "mininet-1", "--json", env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["dir"] == str(tmp_path / "data/protolens/pages/mininet-1")
    assert (tmp_path / "data/protolens/pages/mininet-1/index.html").is_file()


def test_page_adds_a_custom_page(tmp_path: Path) -> None:
    result = _run(page_cmd, "--root", str(tmp_path), "--objects", "50", "--size", "2MB",
                  "--hosts", "2", "--name", "fifty-2m", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["name"] == "fifty-2m" and doc["status"] == "built"
    assert doc["objects"] == 50 and doc["hosts"] == ["a.test", "b.test"]
    objs = doc["manifest"]["objects"]
    assert sum(o["bytes"] for o in objs if o["path"] != "index.html") == 2_000_000
    assert doc["manifest"]["params"] == {"objects": 50, "size": 2_000_000, "hosts": 2}
    listed = json.loads(_run(pages_cmd, "--root", str(tmp_path), "--list", "--json").output)
    assert listed[-1]["name"] == "fifty-2m" and listed[-1]["status"] == "cached"
    again = _run(page_cmd, "--root", str(tmp_path), "--objects", "50", "--size", "2MB",
                 "--hosts", "2", "--name", "fifty-2m", "--json")
    assert json.loads(again.output)["status"] == "cached"


def test_page_default_name(tmp_path: Path) -> None:
    result = _run(page_cmd, "--root", str(tmp_path), "--objects", "3", "--size", "435k", "--csv")
    assert result.exit_code == 0, result.output
    assert "custom-3x435k," in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--objects", "5", "--size", "2x"], "cannot read size '2x'"),
        (["--objects", "100", "--size", "1k"], "too small for 100 objects"),
        (["--objects", "0", "--size", "1k"], "--objects must be 1..5000"),
        (["--objects", "2", "--size", "1k", "--hosts", "4"], "--hosts must be 1..3"),
        (["--objects", "2", "--size", "1k", "--name", "Has Space"], "must be kebab-case"),
        (["--objects", "2", "--size", "1k", "--name", "cell-365x2k"], "is a catalog page"),
    ],
)
def test_page_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = _run(page_cmd, "--root", str(tmp_path), *args)
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: ")
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    assert not list(tmp_path.iterdir())


def test_pages_unknown_name_is_one_line_error(tmp_path: Path) -> None:
    result = _run(pages_cmd, "--root", str(tmp_path), "--name", "nope")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: unknown page(s): nope (see `protolens testbed pages --list`)")


def test_unwritable_root_is_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = _run(pages_cmd, "--root", str(blocker / "pages"), "--name", "mininet-1")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot write pages under ")
    assert len(result.stderr.strip().splitlines()) == 1
