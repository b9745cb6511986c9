"""``merge`` checks every column of a bundle against the one column table, as ingest does
(issue 15, defect 13): a forged bundle with a checksum that matches is still refused with the
store unchanged, naming the table, the column and the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.share import export
from protolens.store import open_ro
from scripts.devkit.store_builder import dump, ingest_all, lab_record
from tests.share.test_share import rewrite_bundle

NOW = 1_763_950_000_000.0
Rows = dict[str, list[dict[str, Any]]]


def _two_shares(rows: Rows) -> None:
    nav = rows["connections"][0]["navigation_id"]
    for c in rows["connections"]:
        if c["navigation_id"] == nav:
            c["share"] = 1.0


FORGERIES: list[tuple[str, Any, str]] = [
    ("status 700", lambda rows: rows["requests"][2].update(status=700),
     "requests.status: value 700 above 599"),
    ("status -500", lambda rows: rows["requests"][2].update(status=-500),
     "requests.status: value -500 below 100"),
    ("schema 99", lambda rows: rows["navigations"][1].update(schema=99),
     "navigations.schema: value 99 above 1"),
    ("start 1e308", lambda rows: rows["navigations"][1].update(started_at_ms=1e308),
     "navigations.started_at_ms: value 1e+308 above 4102444800000"),
    ("nan time", lambda rows: rows["requests"][0].update(start_ms=float("nan")),
     "requests.start_ms: values that are not finite numbers"),
    ("shares sum to 2", _two_shares, "connections.share: a navigation's shares sum to 2, above 1"),
    ("count past 2^53", lambda rows: rows["requests"][0].update(encoded_bytes=2 ** 53 + 1),
     "requests.encoded_bytes: value 9007199254740993 above 2^53"),
    ("long origin", lambda rows: rows["navigations"][0].update(
        url="https://" + "a" * 600, origin="https://" + "a" * 600),
     "navigations.origin: text of 608 characters, at most 512 allowed"),
    ("negative count", lambda rows: rows["hosts"][0].update(connections=-1),
     "hosts.connections: negative value -1"),
    ("flag 2", lambda rows: rows["requests"][1].update(from_disk_cache=2),
     "requests.from_disk_cache: values other than 0 and 1"),
    ("infinite time", lambda rows: rows["requests"][1].update(end_ms=float("inf")),
     "requests.end_ms: values that are not finite numbers"),
    ("negative time beside nulls", lambda rows: (rows["navigations"][1].update(fcp_ms=None),
                                                 rows["navigations"][2].update(fcp_ms=-3.5)),
     "navigations.fcp_ms: negative value -3.5"),
]


def _store(tmp: Path) -> Path:
    db = tmp / "local.db"
    ingest_all(db, [lab_record(300 + i, "", "", "", "", 0, 1000.0 + i, source="passive")
                    for i in range(4)])
    return db


def _export(db: Path, out: Path) -> None:
    export.write(export.build(open_ro(db), allow=frozenset(), since_ms=None, now_ms=NOW,
                              contributor_id="ab" * 16), out, NOW)


@pytest.mark.parametrize("name,change,message", FORGERIES, ids=[f[0] for f in FORGERIES])
def test_a_forged_bundle_is_refused_and_nothing_imported(tmp_path: Path, name: str, change: Any,
                                                         message: str) -> None:
    good, bad = tmp_path / "good.tar", tmp_path / "bad.tar"
    _export(_store(tmp_path), good)
    rewrite_bundle(good, bad, change)  # checksums recomputed: the bundle is "intact"
    research = tmp_path / "r.db"
    assert CliRunner().invoke(main, ["merge", str(good), "--into", str(research)]).exit_code == 0
    before = dump(research)
    res = CliRunner().invoke(main, ["merge", str(bad), "--into", str(research)])
    assert res.exit_code == 2, res.output
    assert message in res.output and "nothing imported" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    assert dump(research) == before


def test_an_old_bundles_remote_ports_are_not_imported(tmp_path: Path) -> None:
    good, old = tmp_path / "good.tar", tmp_path / "v2.tar"
    _export(_store(tmp_path), good)

    def ports(rows: Rows) -> None:
        for table in ("requests", "connections"):
            for r in rows[table]:
                r["remote_port"] = 70000

    rewrite_bundle(good, old, ports, version=2)
    research = tmp_path / "r.db"
    res = CliRunner().invoke(main, ["merge", str(old), "--into", str(research)])
    assert res.exit_code == 0, res.output
    conn = open_ro(research)
    for table in ("requests", "connections"):
        total, ports = conn.execute(f"SELECT count(*), count(remote_port) FROM {table}") \
            .fetchone()
        assert total > 0 and ports == 0, table
