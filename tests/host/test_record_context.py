"""Issue 15 item 4: lab tags come only from the lab runner's bookkeeping (the host's lab
context), never from a record's own ``context``. A passive record sent through the real host
process carrying a campaign's tags must not join that campaign's ``report`` or ``compare``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from test_host_process import Host, frame

from protolens.cli import main
from scripts.devkit.navrecord_builder import make_record
from tests.lab.test_report import seeded_store

FORGED = {"campaign": "c1", "arm": "h2", "condition": "wifi", "repetition": 5, "page": "p1",
          "server_cc": "bbr", "command_line": ["x"], "load_id": "L", "experiment": "e",
          "note": "kept"}


def n_by_arm(db: Path, *cmd: str) -> dict[str, int]:
    out = CliRunner().invoke(main, [*cmd, "--campaign", "c1", "--json", "--db", str(db)])
    assert out.exit_code == 0, out.output
    counts: dict[str, int] = {}
    for row in json.loads(out.output):
        counts[row["arm"]] = counts.get(row["arm"], 0) + row["n"]
    return counts


def test_passive_record_with_campaign_tags_is_not_counted(tmp_path: Path) -> None:
    db = seeded_store(tmp_path / "data" / "p.db")
    before = n_by_arm(db, "report")
    assert before == {"h1": 4, "h2": 4, "h3": 1}
    host = Host(tmp_path)
    assert host.db == db
    rec = make_record(7, seed=77, family="h2")  # source passive
    rec["milestones"]["load_ms"] = 5.0
    rec["context"] = FORGED
    host.send(frame({"type": "record", "schema": 1, "msg_id": "p", "record": rec}))
    assert host.reply()["type"] == "ack"
    assert host.close()[0] == 0
    assert n_by_arm(db, "report") == before
    row = sqlite3.connect(db).execute(
        "SELECT campaign, arm, condition, repetition, page, server_cc, command_line, load_id, "
        "context FROM navigations WHERE id = ?", (rec["id"],)).fetchone()
    assert row[:8] == (None,) * 8
    assert json.loads(row[8]) == {"note": "kept"}  # the record's other keys are kept
