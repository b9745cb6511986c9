"""``protolens replay LOG``: the real command, the real node script (dist/node/replay.cjs, built by
scripts/setup.sh) on real-Chromium fixtures; good logs in both layouts, and bad ones."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protolens.cli.output import rounded
from tests.cli.run import protolens

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures/cdp"


def _events(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _golden(name: str) -> list[dict[str, Any]]:
    return json.loads((FIXTURES / f"{name}.expected.json").read_text())  # type: ignore[no-any-return]


def _without_env(r: dict[str, Any]) -> dict[str, Any]:
    """A record less what only the caller's options decide (browser, extension version), its
    floats as the CLI's JSON prints them (cli/output.py ``rounded``)."""
    page = {k: v for k, v in r["page"].items() if k not in ("browser", "extension_version")}
    return dict(rounded({**r, "page": page}))


def _fail(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "protolens.cli", "replay", *args], text=True,
                          capture_output=True, check=False, env={**os.environ, **(env or {})})
    assert done.returncode == 2, done
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("name", ["h2", "redirect", "warm"])
def test_a_fixture_replays_to_its_golden(name: str) -> None:
    out = json.loads(protolens("replay", str(FIXTURES / f"{name}.jsonl"), "--json").stdout)
    golden = _golden(name)
    assert len(out) == len(golden) > 0
    assert [_without_env(r) for r in out] == [_without_env(r) for r in golden]
    assert {r["page"]["browser"]["version"] for r in out} == {"replay"}


def test_a_lighthouse_style_gzipped_array_gives_the_same_records(tmp_path: Path) -> None:
    # Lighthouse's layout: a JSON array, every event of the page's own target with its
    # sessionId and targetType "page" (tests/fixtures/public/SOURCES.md)
    events = [{**e, "sessionId": "ROOT", "targetType": "page"} if "sessionId" not in e else
              {**e, "targetType": "iframe"} for e in _events("h2")]
    log = tmp_path / "h2.devtoolslog.json.gz"
    log.write_bytes(gzip.compress(json.dumps(events, indent=2).encode()))
    out = json.loads(protolens("replay", str(log), "--json").stdout)
    assert [_without_env(r) for r in out] == [_without_env(r) for r in _golden("h2")]


def test_the_table_shows_the_page_its_connections_and_requests() -> None:
    out = protolens("replay", str(FIXTURES / "h2.jsonl")).stdout
    golden = _golden("h2")[0]
    assert golden["page"]["url"] in out
    assert "Connections (by bytes)" in out and f"Requests ({len(golden['requests'])})" in out


def test_two_navigations_are_two_records_in_the_table() -> None:
    out = protolens("replay", str(FIXTURES / "warm.jsonl")).stdout
    assert "Record 1 of 2" in out and "Record 2 of 2" in out


def test_csv_is_one_row_per_request() -> None:
    rows = protolens("replay", str(FIXTURES / "warm.jsonl"), "--csv").stdout.strip().splitlines()
    golden = _golden("warm")
    assert rows[0].startswith("record_id,request_id,url")
    assert len(rows) - 1 == sum(len(r["requests"]) for r in golden)


def test_a_log_with_no_navigation_says_so(tmp_path: Path) -> None:
    log = tmp_path / "quiet.jsonl"
    log.write_text('{"method": "Page.frameStoppedLoading", "params": {"frameId": "F"}}\n')
    assert "made no record" in protolens("replay", str(log)).stdout
    assert json.loads(protolens("replay", str(log), "--json").stdout) == []


def test_not_a_log(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not JSON\n")
    assert "notes.txt: not a DevTools log: line 1 is not JSON" in _fail(str(bad))
    objects = tmp_path / "objects.json"
    objects.write_text('[{"method": "Page.loadEventFired", "params": {"timestamp": 1}}, 7]')
    assert "not a DevTools log: event 2 is not an event object" in _fail(str(objects))


def test_empty_logs(tmp_path: Path) -> None:
    for name, text in (("empty.jsonl", ""), ("blank.jsonl", "\n \n"), ("none.json", "[]")):
        (tmp_path / name).write_text(text)
        assert "not a DevTools log" in _fail(str(tmp_path / name))


def test_a_truncated_gzip(tmp_path: Path) -> None:
    whole = gzip.compress((FIXTURES / "h2.jsonl").read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    assert "cut.jsonl.gz: not a whole gzip file" in _fail(str(cut))


def test_a_missing_file_and_no_file() -> None:
    assert "no such file" in _fail("/nonexistent/log.jsonl")
    assert "name a LOG file or --navigation ID" in _fail()


def test_no_node_is_one_line(tmp_path: Path) -> None:
    log = str(FIXTURES / "h2.jsonl")
    assert "node not found" in _fail(log, env={"PATH": str(tmp_path)})
    assert "cannot run" in _fail(log, env={"PROTOLENS_NODE": str(tmp_path / "node")})


def test_no_build_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "replay.cjs"
    err = _fail(str(FIXTURES / "h2.jsonl"), env={"PROTOLENS_REPLAY_JS": str(missing)})
    assert str(missing) in err and "npm run build" in err


def test_the_build_exists_where_the_command_looks() -> None:
    # scripts/setup.sh builds it; without it every test above would be an error-path test
    assert (ROOT / "dist/node/replay.cjs").is_file() and shutil.which("node")
