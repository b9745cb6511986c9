"""export / merge: anonymization scanned in every column, corrupt and tampered bundles rejected
with the store unchanged, idempotent merges, provenance, and DuckDB-on-Parquet = SQLite."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import tarfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from protolens.analysis.compare import compare
from protolens.analysis.observe import observations
from protolens.cli import main
from protolens.share import duck, export
from protolens.share.anonymize import Anonymizer, parse_allowlist
from protolens.share.bundle import (
    BUNDLE_SCHEMA,
    TABLES,
    BundleError,
    make_manifest,
    parquet_bytes,
    read_bundle,
    schema_of,
    write_tar,
)
from protolens.share.merge import merge
from protolens.store import open_ro, open_rw
from protolens.store.compare import compare_rows
from scripts.devkit.store_builder import campaign_store, dump, ingest_all, lab_record

NOW = 1_763_950_000_000.0
SECRETS = ("a.test", "b.test", "news.example.org/", "index.html", "user=secret", "token=abc",
           "alice", "/obj/", "156.0.8078.73", "203.0.113.7", "2001:db8", "127.0.0.1", "load-1")
IPV4 = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")


def _store(tmp: Path) -> Path:
    db = tmp / "local.db"
    campaign_store(db, reps=4)
    recs = []
    for i in range(12):
        rec = lab_record(900 + i, "", "", "", "", 0, 2000.0 + i, source="passive",
                         origin_host="news.example.org" if i % 2 else "a.test",
                         family="h1" if (i // 2) % 2 else "h2")
        rec["requests"][1]["remote_ip"] = "203.0.113.7"
        rec["connections"][0]["remote_ip"] = "2001:db8::1"
        rec["page"]["error"] = None
        recs.append(rec)
    ingest_all(db, recs)
    return db


def _export(db: Path, out: Path, allow: frozenset[str] = frozenset(),
            cid: str = "ab" * 16) -> str:
    # "camp" is the volunteer's own campaign name: shared in clear only because it is listed
    built = export.build(open_ro(db), allow=allow, since_ms=None, now_ms=NOW,
                         contributor_id=cid, keep_campaigns=frozenset({"camp"}))
    return export.write(built, out, NOW)


def _tar_tables(path: Path) -> tuple[bytes, dict[str, pa.Table]]:
    with tarfile.open(path) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]
    assert sorted(files) == sorted(["manifest.json", *(f"{t}.parquet" for t in TABLES)])
    return files["manifest.json"], {t: pq.read_table(io.BytesIO(files[f"{t}.parquet"]))
                                    for t in TABLES}


def test_a_bundle_has_no_raw_url_ip_or_full_user_agent(tmp_path: Path) -> None:
    db = _store(tmp_path)
    raw = "\n".join(dump(db))
    assert all(s in raw for s in SECRETS)  # the store does hold every secret we look for
    out = tmp_path / "b.tar"
    _export(db, out)
    manifest, tables = _tar_tables(out)
    texts = [manifest.decode()]
    for name, table in tables.items():
        assert table.num_rows > 0, name
        for column in table.column_names:
            texts.extend(str(v) for v in table.column(column).to_pylist())
    blob = "\n".join(texts)
    for secret in SECRETS:
        assert secret not in blob, secret
    assert not IPV4.search(blob)
    assert "remote_ip" not in tables["requests"].column_names
    assert "command_line" not in tables["navigations"].column_names
    nav = tables["navigations"].to_pylist()
    assert all(r["started_at_ms"] % 60_000 == 0 and r["ingested_at_ms"] % 60_000 == 0
               for r in nav)
    assert {r["browser_version"] for r in nav} == {"156"}
    assert all(re.fullmatch(r"https://anon-[0-9a-f]{16}", r["url"]) for r in nav)
    assert {json.loads(r["context"]).keys() <= {"campaign", "arm", "condition", "repetition",
                                                "page", "server_cc"} for r in nav} == {True}
    hosts = {r["host"] for r in tables["requests"].to_pylist()}
    assert len(hosts) == 3  # a.test, b.test, news.example.org: distinct tokens, consistent
    first_party = {r["host"] for r in tables["requests"].to_pylist() if r["is_main_document"]}
    assert first_party <= {o.split("://")[1] for o in (r["origin"] for r in nav)}


def test_allowlisted_domains_stay_in_clear_as_origins_only(tmp_path: Path) -> None:
    db = _store(tmp_path)
    out = tmp_path / "b.tar"
    allow = parse_allowlist("# top sites\n1,example.org\n2,192.168.1.1\nco.uk\n")
    assert allow == frozenset({"example.org", "co.uk"})
    _export(db, out, allow=allow)
    _, tables = _tar_tables(out)
    origins = {r["origin"] for r in tables["navigations"].to_pylist()}
    assert "https://news.example.org" in origins
    assert all(o == "https://news.example.org" or "anon-" in o for o in origins)
    assert "index.html" not in str(tables["navigations"].to_pylist())


def test_anonymizer_tokens_depend_on_the_salt() -> None:
    a, b = Anonymizer(b"1" * 32), Anonymizer(b"2" * 32)
    assert a.host("x.example") == a.host("X.example.")
    assert a.host("x.example") != b.host("x.example")
    # no port, default or not: a home server's 8443 singles a volunteer out (issue 15 #12)
    assert a.origin("https://x.example:8443/p?q") == f"https://{a.host('x.example')}"
    assert a.origin("not a url") .startswith("other://anon-")
    assert Anonymizer(b"1" * 32, frozenset({"co.uk"})).host("bbc.co.uk").startswith("anon-")
    urls = ["https://x.example:8443/p?q", "https://X.example/", "https://x.example?x#y",
            "https://u:p@x.example#f", "http://x.example:80/a", "https://[::1]:8080/",
            "data:text/html,hi", "https://x.example:99999/", ""]
    fresh = Anonymizer(b"1" * 32)
    assert [a.origin(u) for u in urls] == [fresh._origin(u) for u in urls]  # cache is exact
    assert a.origin("http://x.example:80/a") == f"http://{a.host('x.example')}"


def test_preview_writes_nothing(tmp_path: Path) -> None:
    db = _store(tmp_path)
    out = tmp_path / "b.tar"
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    def listing() -> list[str]:  # reading a WAL store may add its -wal/-shm: not ours
        return sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("local.db"))

    before = listing()
    res = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--out", str(out),
                                           "--preview", "--json"])
    assert res.exit_code == 0, res.output
    shown = json.loads(res.output)
    assert len(shown["tables"]["navigations"]) == 2 * 2 * 3 * 4 + 12
    assert shown["manifest"]["tables"]["requests"]["rows"] == len(shown["tables"]["requests"])
    assert "a.test" not in res.output
    assert listing() == before == []  # no bundle, no data dir
    text = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--preview"])
    assert text.exit_code == 0 and "Nothing written" in text.output
    assert "navigations: 60 rows" in text.output


def test_export_cli_writes_a_bundle_and_keeps_one_contributor_id(tmp_path: Path) -> None:
    db = _store(tmp_path)
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    ids = []
    for name in ("one.tar", "two.tar"):
        res = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--out",
                                               str(tmp_path / name), "--json"])
        assert res.exit_code == 0, res.output
        ids.append(json.loads(res.output)["contributor_id"])
    assert ids[0] == ids[1] and re.fullmatch(r"[0-9a-f]{32}", ids[0])
    assert read_bundle(tmp_path / "one.tar").manifest["contributor_id"] == ids[0]
    again = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--out",
                                             str(tmp_path / "one.tar")])
    assert again.exit_code == 2 and "already exists" in again.output
    late = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--out",
                                            str(tmp_path / "x.tar"), "--since", "2090-01-01"])
    assert late.exit_code == 2 and "nothing to export since 2090-01-01" in late.output
    bad = CliRunner(env=env).invoke(main, ["export", "--db", str(db), "--out",
                                           str(tmp_path / "x.tar"), "--since", "yesterday"])
    assert bad.exit_code == 2 and "--since: not a date" in bad.output


def _merged(tmp: Path, *bundles: Path) -> Path:
    db = tmp / "research.db"
    conn = open_rw(db, now_ms=NOW)
    merge(conn, list(bundles), NOW)
    conn.close()
    return db


def _flip_byte(src: Path, dst: Path, member: str) -> None:
    with tarfile.open(src) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]
    data = bytearray(files[member])
    data[len(data) // 2] ^= 0x01
    files[member] = bytes(data)
    with tarfile.open(dst, "w") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def rewrite_bundle(src: Path, dst: Path, change: Any = None, *, version: int = BUNDLE_SCHEMA,
                   manifest_version: int | None = None) -> None:
    """``src`` rewritten as ``dst``: rows edited by ``change``, tables in bundle schema
    ``version``, the manifest recomputed to match and saying ``manifest_version`` (default:
    ``version``)."""
    b = read_bundle(src)
    rows = {t: b.tables[t].to_pylist() for t in TABLES}
    if change is not None:
        change(rows)
    files = {t: parquet_bytes(pa.Table.from_pylist(rows[t], schema=schema_of(t, version)))
             for t in TABLES}
    info = {k: v for k, v in b.manifest.items() if k not in ("format", "bundle_schema",
                                                               "tables")}
    manifest = make_manifest(files, {t: len(rows[t]) for t in TABLES}, info)
    write_tar(dst, {**manifest, "bundle_schema": manifest_version or version}, files, 0)


@pytest.mark.parametrize("corruption,message", [
    ("flip-requests", "does not match its checksum"),
    ("flip-manifest", "manifest.json"),
    ("share-above-1", "connections.share: value"),
    ("orphan-request", "requests.navigation_id: refers to a navigation not in the bundle"),
    ("raw-url", "navigations.url: not reduced to the origin"),
    ("not-a-tar", "not a readable bundle"),
])
def test_merge_rejects_a_bad_bundle_and_leaves_the_store_unchanged(
        tmp_path: Path, corruption: str, message: str) -> None:
    db = _store(tmp_path)
    good, other, bad = tmp_path / "good.tar", tmp_path / "other.tar", tmp_path / "bad.tar"
    _export(db, good)
    _export(db, other)
    research = _merged(tmp_path, good)
    before = dump(research)
    if corruption == "flip-requests":
        _flip_byte(other, bad, "requests.parquet")
    elif corruption == "flip-manifest":
        _flip_byte(other, bad, "manifest.json")
    elif corruption == "share-above-1":
        rewrite_bundle(other, bad, lambda rows: rows["connections"][3].update(share=2.0))
    elif corruption == "orphan-request":
        rewrite_bundle(other, bad, lambda rows: rows["navigations"].pop(0))
    elif corruption == "raw-url":
        rewrite_bundle(other, bad, lambda rows: rows["navigations"][0].update(
            url="https://a.test/index.html"))
    else:
        bad.write_bytes(b"hello" * 100)
    res = CliRunner().invoke(main, ["merge", str(other), str(bad), "--into", str(research)])
    assert res.exit_code == 2, res.output
    assert message in res.output and "nothing imported" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert dump(research) == before


def test_merging_twice_equals_merging_once_and_provenance_is_on_every_row(
        tmp_path: Path) -> None:
    db = _store(tmp_path)
    bundle = tmp_path / "b.tar"
    checksum = _export(db, bundle, cid="cd" * 16)
    research = tmp_path / "r.db"
    first = CliRunner().invoke(main, ["merge", str(bundle), "--into", str(research), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)[0]["status"] == "imported"
    once = dump(research)
    second = CliRunner().invoke(main, ["merge", str(bundle), "--into", str(research), "--json"])
    assert json.loads(second.output)[0]["status"] == "already imported"
    assert dump(research) == once
    conn = sqlite3.connect(research)
    assert conn.execute("SELECT checksum, contributor_id, navigations FROM bundles").fetchall() \
        == [(checksum, "cd" * 16, 60)]
    for table in TABLES:
        total, stamped = conn.execute(
            f"SELECT count(*), count(bundle) FROM {table}").fetchone()
        assert total > 0 and stamped == total, table
    assert conn.execute("SELECT DISTINCT contributor_id FROM navigation_provenance").fetchall() \
        == [("cd" * 16,)]


def test_an_overlapping_export_skips_navigations_already_merged(tmp_path: Path) -> None:
    db = _store(tmp_path)
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    _export(db, a)
    _export(db, b)  # same loads, another salt: another bundle
    conn = open_rw(tmp_path / "r.db", now_ms=NOW)
    results = merge(conn, [a, b], NOW)
    assert [(r.status, r.navigations, r.skipped) for r in results] == [
        ("imported", 60, 0), ("imported", 0, 60)]
    assert conn.execute("SELECT count(*) FROM requests").fetchone()[0] == \
        read_bundle(a).tables["requests"].num_rows


def test_a_bundle_with_an_empty_table_merges(tmp_path: Path) -> None:
    db = _store(tmp_path)
    full, empty = tmp_path / "full.tar", tmp_path / "empty.tar"
    _export(db, full)
    rewrite_bundle(full, empty, lambda rows: rows["hosts"].clear())
    conn = open_rw(tmp_path / "r.db", now_ms=NOW)
    (result,) = merge(conn, [empty], NOW)
    assert (result.status, result.navigations) == ("imported", 60)
    assert conn.execute("SELECT count(*) FROM hosts").fetchone()[0] == 0


def test_read_bundle_errors() -> None:
    with pytest.raises(BundleError, match="no such file"):
        read_bundle(Path("/nonexistent/b.tar"))


def _report(rows: list[dict[str, Any]], mode: str) -> list[Any]:
    return compare(observations(rows, "plt", mode))


def test_duckdb_on_parquet_equals_sqlite_after_merge(tmp_path: Path) -> None:
    db = _store(tmp_path)
    bundle = tmp_path / "b.tar"
    _export(db, bundle)
    research = _merged(tmp_path, bundle)
    conn = open_ro(research)
    for kwargs, mode in (({"campaign": "camp"}, "campaign"), ({"source": "passive"}, "passive")):
        lite = compare_rows(conn, **kwargs)
        ddb = duck.compare_rows([bundle], **kwargs)
        assert lite and ddb == lite
        report = _report(ddb, mode)
        assert report and report == _report(lite, mode)
    assert any(c.significant for c in _report(compare_rows(conn, campaign="camp"), "campaign"))
    # a directory bundle (the tar unpacked) reads the same
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    with tarfile.open(bundle) as tar:
        tar.extractall(unpacked, filter="data")
    assert duck.compare_rows([unpacked], campaign="camp") == compare_rows(conn, campaign="camp")


def test_compare_cli_on_bundles_equals_compare_on_the_merged_store(tmp_path: Path) -> None:
    db = _store(tmp_path)
    bundle = tmp_path / "b.tar"
    _export(db, bundle)
    research = _merged(tmp_path, bundle)
    args = ["compare", "--campaign", "camp", "--json", "--seed", "3"]
    on_db = CliRunner().invoke(main, [*args, "--db", str(research)])
    on_bundle = CliRunner().invoke(main, [*args, "--bundle", str(bundle)])
    assert on_db.exit_code == 0 and on_bundle.exit_code == 0, on_bundle.output
    assert json.loads(on_db.output) == json.loads(on_bundle.output) != []
    broken = tmp_path / "x.tar"
    broken.write_bytes(b"junk")
    res = CliRunner().invoke(main, [*args, "--bundle", str(broken)])
    assert res.exit_code == 2 and "not a readable bundle" in res.output


def _duplicate_request(rows: dict[str, list[dict[str, Any]]]) -> None:
    """Valid row by row, so the bundle passes validation, but the store's UNIQUE
    (navigation_id, request_id) refuses it at import. Fresh navigation ids, so no row of it is
    skipped as already merged."""
    fresh = {r["id"]: f"{i:08d}-0000-4000-8000-000000000000"
             for i, r in enumerate(rows["navigations"])}
    for table, items in rows.items():
        for row in items:
            key = "id" if table == "navigations" else "navigation_id"
            row[key] = fresh[row[key]]
    rows["requests"].append(dict(rows["requests"][0]))


def test_a_refused_merge_creates_no_store(tmp_path: Path) -> None:
    """Issue 15 item 8: neither a bundle refused by validation nor one the store refuses
    leaves a new --into store behind."""
    db = _store(tmp_path)
    good, refused = tmp_path / "good.tar", tmp_path / "refused.tar"
    _export(db, good)
    rewrite_bundle(good, refused, _duplicate_request)
    (tmp_path / "junk.tar").write_bytes(b"hello" * 100)
    for bad in (tmp_path / "junk.tar", refused):
        research = tmp_path / f"new-{bad.stem}.db"
        res = CliRunner().invoke(main, ["merge", str(bad), "--into", str(research)])
        assert res.exit_code == 2 and "nothing imported" in res.output, res.output
        assert sorted(p.name for p in tmp_path.glob("new-*")) == []


def test_a_merge_of_several_bundles_is_all_or_nothing(tmp_path: Path) -> None:
    """Issue 15 item 9: a later bundle the store refuses rolls back the earlier ones too, and
    the message names it; without it, every bundle is imported."""
    db = _store(tmp_path)
    first, second, refused = tmp_path / "1.tar", tmp_path / "2.tar", tmp_path / "3.tar"
    _export(db, first)
    campaign_store(tmp_path / "other.db", reps=2, seed=500)
    _export(tmp_path / "other.db", second)
    rewrite_bundle(first, refused, _duplicate_request)
    research = _merged(tmp_path, first)
    before = dump(research)
    res = CliRunner().invoke(main, ["merge", str(second), str(refused), "--into", str(research)])
    assert res.exit_code == 2, res.output
    assert f"{refused}: rejected by the store's constraints" in res.output
    assert "nothing imported" in res.output
    assert dump(research) == before  # the valid second bundle was rolled back with it
    ok = CliRunner().invoke(main, ["merge", str(second), str(first), "--into", str(research),
                                   "--json"])
    assert ok.exit_code == 0, ok.output
    results = json.loads(ok.output)
    assert [r["status"] for r in results] == ["imported", "already imported"]
    n_second = read_bundle(second).tables["navigations"].num_rows
    assert results[0]["navigations"] + results[0]["skipped"] == n_second
    assert results[0]["navigations"] > 0
    conn = sqlite3.connect(research)
    assert conn.execute("SELECT count(*) FROM bundles").fetchone()[0] == 2
    assert conn.execute("SELECT count(*) FROM navigations").fetchone()[0] == \
        read_bundle(first).tables["navigations"].num_rows + results[0]["navigations"]
