"""Bundle schema versions: export writes 2 (adds ``navigations.late_attach``); merge and the
DuckDB reader still take version-1 bundles from volunteers on an older ProtoLens, their missing
column read as null; an unknown version or a bad late_attach value is refused with the store
unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.share import duck, export
from protolens.share.bundle import (
    BUNDLE_SCHEMA,
    read_bundle,
)
from protolens.store import open_ro
from protolens.store.compare import compare_rows
from scripts.devkit.store_builder import dump, ingest_all, lab_record
from tests.share.test_share import rewrite_bundle

NOW = 1_763_950_000_000.0


def _store(tmp: Path) -> Path:
    """12 passive loads on two origins and two protocols; every third joined late."""
    db = tmp / "local.db"
    recs = []
    for i in range(12):
        rec = lab_record(700 + i, "", "", "", "", 0, 1500.0 + 40 * i, source="passive",
                         origin_host="news.example.org" if i % 2 else "a.test",
                         family="h1" if (i // 2) % 2 else "h2")
        rec["page"]["late_attach"] = "commit" if i % 3 == 0 else None
        recs.append(rec)
    ingest_all(db, recs)
    return db


def _export(db: Path, out: Path) -> None:
    built = export.build(open_ro(db), allow=frozenset(), since_ms=None, now_ms=NOW,
                         contributor_id="ef" * 16)
    export.write(built, out, NOW)


def test_export_carries_late_attach_and_merge_keeps_it(tmp_path: Path) -> None:
    db = _store(tmp_path)
    bundle = tmp_path / "v2.tar"
    _export(db, bundle)
    b = read_bundle(bundle)
    assert b.manifest["bundle_schema"] == BUNDLE_SCHEMA >= 2
    assert b.tables["navigations"].column("late_attach").to_pylist().count("commit") == 4
    research = tmp_path / "r.db"
    res = CliRunner().invoke(main, ["merge", str(bundle), "--into", str(research), "--json"])
    assert res.exit_code == 0, res.output
    conn = open_ro(research)
    local = open_ro(db)
    q = "SELECT id, late_attach FROM navigations ORDER BY id"
    assert conn.execute(q).fetchall() == local.execute(q).fetchall()


def test_a_version_1_bundle_merges_with_nulls_and_compares_like_sqlite(tmp_path: Path) -> None:
    db = _store(tmp_path)
    v2, v1 = tmp_path / "v2.tar", tmp_path / "v1.tar"
    _export(db, v2)
    rewrite_bundle(v2, v1, version=1)
    old = read_bundle(v1)
    assert old.manifest["bundle_schema"] == 1
    assert old.tables["navigations"].column("late_attach").null_count == 12

    research = tmp_path / "r.db"
    res = CliRunner().invoke(main, ["merge", str(v1), "--into", str(research), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)[0]["navigations"] == 12
    merged = open_ro(research)
    assert tuple(merged.execute("SELECT count(*), count(late_attach) FROM navigations")
                 .fetchone()) == (12, 0)
    # DuckDB straight on the Parquet files (one old bundle) gives the merged store's numbers
    lite = compare_rows(merged, source="passive")
    assert lite and duck.compare_rows([v1], source="passive") == lite


def test_duckdb_reads_old_and_new_bundles_together(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    old, new = tmp_path / "old.tar", tmp_path / "new.tar"
    _export(_store(a), tmp_path / "tmp.tar")
    rewrite_bundle(tmp_path / "tmp.tar", old, version=1)
    db_b = b / "local.db"
    ingest_all(db_b, [lab_record(800 + i, "", "", "", "", 0, 900.0 + 10 * i, source="passive",
                                 family="h2" if i % 2 else "h1") for i in range(6)])
    _export(db_b, new)
    research = tmp_path / "r.db"
    res = CliRunner().invoke(main, ["merge", str(old), str(new), "--into", str(research)])
    assert res.exit_code == 0, res.output
    lite = compare_rows(open_ro(research), source="passive")
    assert len(lite) == 18
    assert duck.compare_rows([old, new], source="passive") == lite
    assert duck.compare_rows([new, old], source="passive") == lite


@pytest.mark.parametrize("version,change,message", [
    (BUNDLE_SCHEMA + 1, None, f"bundle schema {BUNDLE_SCHEMA + 1} is not supported"),
    (BUNDLE_SCHEMA, lambda rows: rows["navigations"][0].update(late_attach="early"),
     "navigations.late_attach: values other than response, commit"),
])
def test_unknown_version_or_bad_late_attach_is_refused(
        tmp_path: Path, version: int, change: Any, message: str) -> None:
    db = _store(tmp_path)
    good, bad = tmp_path / "good.tar", tmp_path / "bad.tar"
    _export(db, good)
    # a newer ProtoLens's bundle: here only its manifest says so
    rewrite_bundle(good, bad, change, manifest_version=version)
    research = tmp_path / "r.db"
    ok = CliRunner().invoke(main, ["merge", str(good), "--into", str(research)])
    assert ok.exit_code == 0, ok.output
    before = dump(research)
    res = CliRunner().invoke(main, ["merge", str(bad), "--into", str(research)])
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1
    assert dump(research) == before
