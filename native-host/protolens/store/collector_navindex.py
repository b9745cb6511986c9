"""The catalog's navigation ids and fingerprints, looked up in memory (adapter: reads the catalog
of ``collector.c003_navigations_in_order``).

The catalog stores each navigation once, in insertion order (``navigation_ids.seq``), with a
64-bit key of its id and one of its contributor and fingerprint. A B-tree keyed by a random id
writes one page per key once it outgrows the bundle: measured here, a 1,000-navigation commit
cost 8 ms of CPU with an empty catalog and 25-35 ms with 200,000-300,000 ids (two random TEXT
indexes, about 2,000 pages to the WAL and again at the checkpoint). Rows appended in key order
cost the same at any size (2.5 ms up to 500,000 ids), so the lookup moved here: each process
keeps the keys of the rows it has read, sorted (16 bytes per key and index), and reads the rows
added since, by ``seq``, inside the commit's write transaction. What it answers is therefore
always the committed catalog, whichever process wrote it. A deleted bundle bumps
``navigation_generation`` (trigger), and the next look-up reads the whole catalog again.

A key equal to a stored one is confirmed against the stored row (its id, contributor and
fingerprint), so a 64-bit collision never refuses a navigation; a key that collides with a row
that does not match is looked up again by a scan of the table (``_scan``), so it never lets a
duplicate through either.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence

import numpy as np

MERGE_AT = 65_536
"""Keys read since the last merge above which they are merged into the sorted arrays (and
above an eighth of them): lookups stay a binary search, merges stay rare."""

READ_AT_ONCE = 131_072
"""Rows read per query: a process's first look-up reads the whole catalog, in parts."""


def key64(*parts: str) -> int:
    """A signed 64-bit key (SQLite's INTEGER) of ``parts``: BLAKE2b (RFC 7693), 8 bytes."""
    digest = hashlib.blake2b("\0".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Keys:
    """Keys to the smallest ``seq`` of a row that has them: sorted arrays plus recent keys."""

    def __init__(self, merge_at: int = MERGE_AT) -> None:
        self.merge_at = merge_at
        self.keys = np.empty(0, np.int64)
        self.seqs = np.empty(0, np.int64)
        self.recent: dict[int, int] = {}

    def add(self, keys: Sequence[int], seqs: Sequence[int]) -> None:
        """Rows read in ``seq`` order; a key already known keeps its older row."""
        new = dict(zip(reversed(keys), reversed(seqs), strict=True))  # the oldest assigned last
        recent = self.recent
        recent.update({k: seq for k, seq in new.items() if k not in recent})

    def merge(self) -> None:
        if len(self.recent) <= max(self.merge_at, len(self.keys) // 8):
            return
        keys = np.concatenate([self.keys, np.fromiter(self.recent, np.int64, len(self.recent))])
        seqs = np.concatenate([self.seqs,
                               np.fromiter(self.recent.values(), np.int64, len(self.recent))])
        order = np.lexsort((seqs, keys))  # by key, then seq: the first of equal keys is oldest
        self.keys, self.seqs, self.recent = keys[order], seqs[order], {}

    def find(self, keys: Sequence[int]) -> dict[int, int]:
        """The keys of ``keys`` that are stored, each with its smallest ``seq``."""
        found: dict[int, int] = {}
        if len(self.keys):
            want = np.fromiter(keys, np.int64, len(keys))
            pos = np.minimum(np.searchsorted(self.keys, want), len(self.keys) - 1)
            for i in np.flatnonzero(self.keys[pos] == want):
                found[int(want[i])] = int(self.seqs[pos[i]])
        for k in keys:
            seq = self.recent.get(k)
            if seq is not None and (k not in found or seq < found[k]):
                found[k] = seq
        return found


class NavIndex:
    """One process's view of the catalog's navigation keys; safe to share between threads.
    Call ``sync`` inside the transaction that commits, then ``ids`` and ``fingerprints``; a
    ``sync`` outside any transaction (at start) reads most rows before the write lock is held:
    rows are only appended, and a deletion after its read of the generation makes the next
    ``sync`` read everything again."""

    def __init__(self, read_at_once: int = READ_AT_ONCE) -> None:
        self.read_at_once = read_at_once
        self._lock = threading.Lock()
        self._seen, self._generation = 0, -1
        self._ids, self._fps = Keys(), Keys()

    def sync(self, conn: sqlite3.Connection) -> None:
        """Read the rows committed since the last call (all of them after a deletion)."""
        with self._lock:
            generation = conn.execute("SELECT n FROM navigation_generation").fetchone()[0]
            if generation != self._generation:
                self._seen, self._generation = 0, generation
                self._ids, self._fps = Keys(), Keys()
            cur = conn.cursor()
            cur.row_factory = None  # plain tuples: thousands of rows per commit
            while rows := cur.execute("SELECT seq, id_key, fp_key FROM navigation_ids WHERE "
                                      "seq > ? ORDER BY seq LIMIT ?",
                                      (self._seen, self.read_at_once)).fetchall():
                seqs, id_keys, fp_keys = zip(*rows, strict=True)
                self._ids.add(id_keys, seqs)
                self._fps.add(fp_keys, seqs)
                self._seen = seqs[-1]
                self._ids.merge()
                self._fps.merge()

    def ids(self, conn: sqlite3.Connection, ids: Sequence[tuple[str, int]]
            ) -> list[tuple[str, str]]:
        """(id, contributor) of every id of ``ids`` (id, its ``key64``) stored already."""
        wanted = {key: i for i, key in ids}
        with self._lock:
            hits = self._ids.find(list(wanted))
        rows = _rows(conn, hits.values())
        out = []
        for key, seq in hits.items():
            row = rows[seq]
            if row[0] == wanted[key]:
                out.append((row[0], row[1]))
            else:  # a 64-bit collision: the stored row is another id
                out += [(r[0], r[1]) for r in _scan(conn, "id = ?", (wanted[key],))]
        return out

    def fingerprints(self, conn: sqlite3.Connection, contributor: str,
                     fingerprints: Sequence[tuple[str, int]]) -> dict[str, str]:
        """fingerprint -> the id of the oldest stored navigation of ``contributor`` with it;
        ``fingerprints``: (fingerprint, ``key64(contributor, fingerprint)``)."""
        keys = {key: f for f, key in fingerprints}
        with self._lock:
            hits = self._fps.find(list(keys))
        rows = _rows(conn, hits.values())
        out = {}
        for key, seq in hits.items():
            row, fp = rows[seq], keys[key]
            if row[1:] == (contributor, fp):
                out[fp] = row[0]
            else:  # a 64-bit collision: look for a true match
                found = _scan(conn, "contributor = ? AND fingerprint = ?", (contributor, fp))
                if found:
                    out[fp] = found[0][0]
        return out


def _rows(conn: sqlite3.Connection, seqs: Iterable[int]) -> dict[int, tuple[str, str, str]]:
    wanted = sorted(set(seqs))
    out: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(wanted), 500):  # SQLite's bound-parameter limit
        chunk = wanted[start:start + 500]
        out.update((r[0], (r[1], r[2], r[3])) for r in conn.execute(
            "SELECT seq, id, contributor, fingerprint FROM navigation_ids WHERE seq IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return out


def _scan(conn: sqlite3.Connection, where: str, params: tuple[str, ...]
          ) -> list[tuple[str, str]]:
    """Rows by a full scan: only after a 64-bit key collision."""
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT id, contributor FROM navigation_ids WHERE {where} ORDER BY seq", params)]
