"""SQL of the collector's writers and of the commit that acknowledges a bundle (catalog tables
from ``collector.c002_keyed_leased`` and ``c003_navigations_in_order``).

Several collector processes (``serve --workers N``, several ``serve`` on one data directory, or
several machines sharing storage and one catalog) write one dataset. Each process holds a
**lease**, a row in ``writers`` it renews; it stages its files only in its own folder
``DIR/tmp/<writer id>/``. The commit is one transaction that (1) checks the writer's lease row
still exists, (2) checks no navigation id of the bundle is stored already
(``collector_navindex.py``), (3) inserts the bundle, its files and its navigation ids. Only after
that commit are the staged files renamed into the dataset. ``expire`` deletes the rows of
writers whose lease ran out, in a transaction of its own; a writer whose row is gone can no
longer commit, so a sweep that runs after ``expire`` may roll that writer's committed files
forward and delete the rest. The catalog database serializes the two (SQLite's write lock,
``BEGIN IMMEDIATE``), which is what makes "committed" the only point of truth.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

from protolens.store.collector import CatalogBundle, find_bundle, insert_bundle
from protolens.store.collector_navindex import NavIndex, key64
from protolens.store.tx import transaction


class NavKey(NamedTuple):
    """One navigation of a bundle: its id and its fingerprint (page and timings), with their
    64-bit keys (``collector_navindex.key64``), computed before the commit's write lock. A named
    tuple: a bundle makes one per navigation, and 1,000 of them took 0.35-0.68 ms to construct
    against 0.79-1.03 ms as a frozen dataclass (best of 5 runs, twice)."""

    id: str
    fingerprint: str
    id_key: int
    fp_key: int
    """The key of the contributor and the fingerprint: near-duplicates are per contributor."""

    @classmethod
    def of(cls, id: str, fingerprint: str, contributor: str) -> NavKey:  # noqa: A002
        return cls(id, fingerprint, key64(id), key64(contributor, fingerprint))


class LeaseLost(Exception):
    """The writer's lease expired and another process swept it: nothing was committed."""


class Duplicate(Exception):
    """Navigation ids of the bundle are stored already (refused, recorded in ``refusals``)."""

    def __init__(self, ids: int, first_id: str, other_contributor: str) -> None:
        super().__init__(f"{ids} navigation ids stored already (the first: {first_id})")
        self.ids, self.first_id, self.other_contributor = ids, first_id, other_contributor


# --- leases ----------------------------------------------------------------------------------

def register_writer(conn: sqlite3.Connection, writer: str, host: str, pid: int, now_ms: float,
                    ttl_ms: float) -> None:
    with transaction(conn):
        conn.execute("INSERT INTO writers (id, host, pid, started_at_ms, expires_at_ms) "
                     "VALUES (?, ?, ?, ?, ?)", (writer, host, pid, now_ms, now_ms + ttl_ms))


def renew_writer(conn: sqlite3.Connection, writer: str, now_ms: float, ttl_ms: float) -> bool:
    """Extend the lease; False if it is gone (expired and swept by another process)."""
    with transaction(conn):
        cur = conn.execute("UPDATE writers SET expires_at_ms = ? WHERE id = ?",
                           (now_ms + ttl_ms, writer))
    return cur.rowcount == 1


def release_writer(conn: sqlite3.Connection, writer: str) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM writers WHERE id = ?", (writer,))


def expire_writers(conn: sqlite3.Connection, now_ms: float) -> set[str]:
    """Delete the leases that ran out; the writers still live afterwards."""
    with transaction(conn):
        conn.execute("DELETE FROM writers WHERE expires_at_ms < ?", (now_ms,))
        return {r[0] for r in conn.execute("SELECT id FROM writers")}


def expire_ended_writers(conn: sqlite3.Connection, machine: str,
                         alive: Callable[[int], bool]) -> list[str]:
    """Delete the leases of writers registered on ``machine`` (``writers.host``: the boot and
    process namespace of their process, so that a pid names the same process here) whose
    process has ended: a process killed with ``kill -9`` then need not wait for its lease to run
    out before a sweep takes over its folder. A process ``alive`` wrongly calls ended cannot
    commit any more and its uploads get 503 (their clients send them again); one it wrongly
    calls alive keeps its lease until it runs out. Returns the ids deleted."""
    with transaction(conn):
        rows = conn.execute("SELECT id, pid FROM writers WHERE host = ?", (machine,)).fetchall()
        ended = [row[0] for row in rows if not alive(row[1])]
        conn.executemany("DELETE FROM writers WHERE id = ?", [(w,) for w in ended])
    return ended


def live_writers(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM writers")}


# --- the commit ------------------------------------------------------------------------------

def _duplicate(conn: sqlite3.Connection, index: NavIndex, b: CatalogBundle,
               navs: Sequence[NavKey]) -> Duplicate | None:
    ids = [n.id for n in navs]
    if len(set(ids)) != len(ids):  # ``share/bundle.py`` refuses these first; never stored twice
        first = sorted(i for i, n in Counter(ids).items() if n > 1)[0]
        return Duplicate(len(ids) - len(set(ids)), first, b.contributor)
    if navs and navs[0].fp_key != key64(b.contributor, navs[0].fingerprint):
        raise ValueError("navigation keys made for another contributor")
    found = sorted(index.ids(conn, [(n.id, n.id_key) for n in navs]))
    if not found:
        return None
    return Duplicate(len(found), found[0][0], found[0][1])


def commit_bundle(conn: sqlite3.Connection, writer: str | None, b: CatalogBundle,
                  bundle_schema: int, protolens_version: str | None, exported_at: str | None,
                  navs: Sequence[NavKey], index: NavIndex | None = None) -> CatalogBundle:
    """Acknowledge a bundle: one transaction. Returns the bundle stored (another upload's of the
    same bundle under the same token, if that one won the race); raises ``LeaseLost``
    (``writer`` given and its lease gone) or ``Duplicate`` (recorded in ``refusals`` in the
    same transaction). ``index``: the process's navigation keys, kept between commits (a new
    one reads every stored key)."""
    index = index if index is not None else NavIndex()
    with transaction(conn):
        if writer is not None and conn.execute("SELECT 1 FROM writers WHERE id = ?",
                                               (writer,)).fetchone() is None:
            raise LeaseLost(writer)
        existing = find_bundle(conn, b.checksum)
        if existing is not None and existing.contributor == b.contributor:
            return existing
        if existing is not None:
            dup: Duplicate | None = Duplicate(len(navs), navs[0].id if navs else "",
                                              existing.contributor)
        else:
            index.sync(conn)  # under the write lock: every commit of every process is read
            dup = _duplicate(conn, index, b, navs)
        if dup is not None:
            conn.execute("INSERT INTO refusals (at_ms, contributor, checksum, reason, "
                         "other_contributor, ids, first_id) VALUES (?, ?, ?, 'duplicate', ?, ?, ?)",
                         (b.received_at_ms, b.contributor, b.checksum, dup.other_contributor,
                          dup.ids, dup.first_id))
        else:
            insert_bundle(conn, b, bundle_schema, protolens_version, exported_at)
            _store_navs(conn, index, b, navs)
    if dup is not None:
        raise dup
    return b


def _store_navs(conn: sqlite3.Connection, index: NavIndex, b: CatalogBundle,
                navs: Sequence[NavKey]) -> None:
    """The bundle's navigation ids, appended, and a flag for each navigation whose page and
    timings equal another of the same contributor's (a near-duplicate; the oldest stored, or the
    first of the bundle)."""
    seen = index.fingerprints(conn, b.contributor,
                              sorted({(n.fingerprint, n.fp_key) for n in navs}))
    flags = []
    for n in navs:
        prior = seen.get(n.fingerprint)
        if prior is not None:
            flags.append((b.checksum, n.id, "near-duplicate", prior))
        seen.setdefault(n.fingerprint, n.id)
    conn.executemany("INSERT INTO navigation_ids (id, checksum, contributor, fingerprint, id_key, "
                     "fp_key) VALUES (?, ?, ?, ?, ?, ?)",
                     [(n.id, b.checksum, b.contributor, n.fingerprint, n.id_key, n.fp_key)
                      for n in navs])
    conn.executemany("INSERT INTO flags (checksum, navigation_id, kind, of_id) "
                     "VALUES (?, ?, ?, ?)", flags)


def refusals(conn: sqlite3.Connection) -> list[dict[str, object]]:
    return [dict(r) for r in conn.execute(
        "SELECT at_ms, contributor, checksum, reason, other_contributor, ids, first_id "
        "FROM refusals ORDER BY at_ms")]


def flags(conn: sqlite3.Connection) -> list[dict[str, object]]:
    return [dict(r) for r in conn.execute(
        "SELECT f.kind, b.contributor, f.checksum, f.navigation_id, f.of_id FROM flags f "
        "JOIN bundles b USING (checksum) ORDER BY b.received_at_ms, f.navigation_id")]
