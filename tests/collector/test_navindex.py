"""The catalog's navigation ids looked up in memory (``store/collector_navindex.py``), on a real
SQLite catalog: an id committed by another process's index is refused; a deleted bundle's ids
can be stored again; 64-bit key collisions neither refuse a new id nor let a stored one through;
near-duplicates are flagged across bundles; a catalog of the previous schema is upgraded with
every row. Under a second."""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from pathlib import Path

import pytest

from protolens.store.collector import (
    CATALOG_MIGRATIONS,
    CatalogBundle,
    CatalogFile,
    add_token,
    delete_bundles,
    open_catalog,
)
from protolens.store.collector_leases import Duplicate, NavKey, commit_bundle, flags, refusals
from protolens.store.collector_navindex import Keys, NavIndex, key64
from protolens.store.db import open_rw
from protolens.store.migrate import apply_migrations
from scripts.devkit.collector import catalog_with_volunteers


def _catalog(tmp: Path) -> sqlite3.Connection:
    return catalog_with_volunteers(tmp / "catalog.db")


def _bundle(n: int, who: str) -> CatalogBundle:
    chk = hashlib.sha256(f"bundle {n}".encode()).hexdigest()
    return CatalogBundle(chk, who, "ab" * 16, float(n), "2025-11-24", 1,
                         (CatalogFile("navigations", f"{chk}.parquet", 1, chk),))


def _id(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def _navs(who: str, *names: str) -> list[NavKey]:
    return [NavKey.of(_id(n), f"fp-{n}", who) for n in names]


def _commit(conn: sqlite3.Connection, n: int, who: str, navs: list[NavKey],
            index: NavIndex) -> CatalogBundle:
    return commit_bundle(conn, None, _bundle(n, who), 4, None, None, navs, index)


def test_an_id_committed_through_another_index_is_refused(tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    # two processes, each with its own keys; one reads the rows one at a time
    mine, theirs = NavIndex(read_at_once=1), NavIndex()
    _commit(conn, 1, "vol-1", _navs("vol-1", "a", "b"), mine)
    _commit(conn, 2, "vol-2", _navs("vol-2", "c", "d"), theirs)  # mine has not read it yet
    with pytest.raises(Duplicate) as err:
        _commit(conn, 3, "vol-1", _navs("vol-1", "e", "d"), mine)
    assert (err.value.ids, err.value.first_id, err.value.other_contributor) == \
        (1, _id("d"), "vol-2")
    with pytest.raises(Duplicate):
        _commit(conn, 4, "vol-2", _navs("vol-2", "a"), theirs)
    assert [r["checksum"] for r in refusals(conn)] == [_bundle(3, "").checksum,
                                                      _bundle(4, "").checksum]
    assert conn.execute("SELECT count(*) FROM navigation_ids").fetchone()[0] == 4


def test_the_same_id_twice_in_one_bundle_is_refused(tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    with pytest.raises(Duplicate) as err:
        _commit(conn, 1, "vol-1", _navs("vol-1", "a", "b", "a"), NavIndex())
    assert err.value.ids == 1 and err.value.first_id == _id("a")
    assert conn.execute("SELECT count(*) FROM navigation_ids").fetchone()[0] == 0


def test_a_deleted_bundles_ids_can_be_stored_again(tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    index = NavIndex()
    first = _commit(conn, 1, "vol-1", _navs("vol-1", "a", "b"), index)
    _commit(conn, 2, "vol-1", _navs("vol-1", "c"), index)
    assert delete_bundles(conn, [first.checksum]) == 1
    _commit(conn, 3, "vol-2", _navs("vol-2", "a", "b"), index)  # it read the catalog again
    with pytest.raises(Duplicate):
        _commit(conn, 4, "vol-2", _navs("vol-2", "c"), index)  # what was kept still counts


def test_key_collisions_neither_refuse_nor_let_through(tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    index = NavIndex()
    stored = _commit(conn, 1, "vol-1", _navs("vol-1", "a"), index)
    b = _navs("vol-1", "b")[0]
    # what a 64-bit collision looks like: the stored "a" under the key of "b"
    conn.execute("UPDATE navigation_ids SET id_key = ?, fp_key = ? WHERE checksum = ?",
                 (key64(b.id), key64("vol-1", b.fingerprint), stored.checksum))
    _commit(conn, 2, "vol-1", [b], NavIndex())  # not refused, not flagged: "a" is not "b"
    assert flags(conn) == []
    for reader in (NavIndex(), index):
        with pytest.raises(Duplicate) as err:
            # "b" is stored now, behind the key "a" has too
            _commit(conn, 3, "vol-2", _navs("vol-2", "b"), reader)
        assert err.value.first_id == b.id
    _commit(conn, 4, "vol-1", [NavKey.of(_id("z"), b.fingerprint, "vol-1")], index)
    assert [(f["navigation_id"], f["of_id"]) for f in flags(conn)] == [(_id("z"), b.id)]


def test_near_duplicates_flagged_across_bundles_of_one_contributor(tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    index = NavIndex()
    _commit(conn, 1, "vol-1", _navs("vol-1", "a", "b"), index)
    same_a = NavKey.of(_id("a2"), "fp-a", "vol-2")
    _commit(conn, 2, "vol-2", [same_a], index)  # another contributor: not a near-duplicate
    again = [NavKey.of(_id(n), "fp-a", "vol-1") for n in ("a3", "a4")]
    _commit(conn, 3, "vol-1", again, NavIndex())
    assert sorted((f["contributor"], f["navigation_id"], f["of_id"]) for f in flags(conn)) == \
        sorted(("vol-1", k.id, _id("a")) for k in again)


def test_a_previous_catalog_is_upgraded_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    conn = open_rw(path, 0.0, migrate=False)
    apply_migrations(conn, 0.0, CATALOG_MIGRATIONS[:2])  # the schema before navigation keys
    add_token(conn, "vol-1", "h", 0.0)
    old = [_navs("vol-1", f"{n}-{i}")[0] for n in range(3) for i in range(4)]
    for n in range(3):
        b = _bundle(n, "vol-1")
        conn.execute("INSERT INTO bundles (checksum, contributor, contributor_id, "
                     "received_at_ms, day, bytes, bundle_schema) VALUES (?, ?, ?, ?, ?, ?, 4)",
                     (b.checksum, "vol-1", "ab" * 16, 0.0, b.day, 1))
        conn.executemany("INSERT INTO navigation_ids (id, checksum, contributor, fingerprint) "
                         "VALUES (?, ?, ?, ?)",
                         [(k.id, b.checksum, "vol-1", k.fingerprint) for k in old[4 * n:4 * n + 4]])
    conn.close()
    conn = open_catalog(path, 0.0)
    rows = conn.execute("SELECT id, contributor, fingerprint, id_key, fp_key "
                        "FROM navigation_ids ORDER BY seq").fetchall()
    assert [tuple(r) for r in rows] == [(k.id, "vol-1", k.fingerprint, key64(k.id),
                                         key64("vol-1", k.fingerprint)) for k in old]
    with pytest.raises(Duplicate) as err:
        _commit(conn, 9, "vol-1", [old[5]], NavIndex())
    assert err.value.first_id == old[5].id
    assert delete_bundles(conn, [_bundle(0, "").checksum]) == 1  # the generation trigger
    assert conn.execute("SELECT n FROM navigation_generation").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM navigation_ids").fetchone()[0] == 8


def test_keys_merged_keep_the_oldest_row_of_each_key() -> None:
    keys = Keys(merge_at=2)
    keys.add([5, -2, 5, 9], [1, 2, 3, 4])
    keys.merge()  # 3 keys read, more than merge_at: into the sorted arrays
    assert keys.recent == {} and list(keys.keys) == [-2, 5, 9]
    keys.add([7, -2, 2**63 - 1], [5, 6, 7])
    assert keys.find([5, -2, 7, 3, 2**63 - 1, -2**63]) == {5: 1, -2: 2, 7: 5, 2**63 - 1: 7}
    keys.add([1, 7], [8, 9])  # 7 is known: its row stays 5
    keys.merge()
    assert list(keys.keys) == [-2, -2, 1, 5, 7, 9, 2**63 - 1]
    assert list(keys.seqs) == [2, 6, 8, 1, 5, 4, 7]
    assert keys.find([-2, 1]) == {-2: 2, 1: 8}


def test_keys_made_for_another_contributor_are_refused_before_anything_is_stored(
        tmp_path: Path) -> None:
    conn = _catalog(tmp_path)
    with pytest.raises(ValueError, match="another contributor"):
        _commit(conn, 1, "vol-2", _navs("vol-1", "a"), NavIndex())
    assert conn.execute("SELECT count(*) FROM navigation_ids").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM bundles").fetchone()[0] == 0
