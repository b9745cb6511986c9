"""The one rule of which loads a comparison takes (record/comparable.py): its Python predicate
and its SQL text agree on every kind of row, in SQLite and in DuckDB (Spark runs the same text:
tests/collector/test_spark_engine.py)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable

import duckdb
import pytest

from protolens.record.comparable import comparable, comparable_sql

ROWS = [{"id": i, "failed": f, "warm": w, "incomplete": inc}
        for i, (f, w, inc) in enumerate(itertools.product((0, 1), (0, 1), (0, 1, None)))]
"""Every combination, an older record's null flag included."""


def _sqlite(sql: str, params: list[int]) -> set[int]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE navigations (id INTEGER, failed INTEGER, warm INTEGER, "
                 "incomplete INTEGER)")
    conn.executemany("INSERT INTO navigations VALUES (:id, :failed, :warm, :incomplete)", ROWS)
    return {r[0] for r in conn.execute(f"SELECT n.id FROM navigations n WHERE {sql}", params)}


def _duckdb(sql: str, params: list[int]) -> set[int]:
    con = duckdb.connect()
    con.execute("CREATE TABLE navigations (id INTEGER, failed INTEGER, warm INTEGER, "
                "incomplete BIGINT)")
    con.executemany("INSERT INTO navigations VALUES (?, ?, ?, ?)",
                    [[r["id"], r["failed"], r["warm"], r["incomplete"]] for r in ROWS])
    return {r[0] for r in con.execute(f"SELECT n.id FROM navigations n WHERE {sql}",
                                      params).fetchall()}


@pytest.mark.parametrize("engine", [_sqlite, _duckdb])
@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("include_incomplete", [False, True])
def test_the_sql_takes_the_rows_the_predicate_takes(
        engine: Callable[[str, list[int]], set[int]], warm: bool,
        include_incomplete: bool) -> None:
    want = {r["id"] for r in ROWS if comparable(r, warm, include_incomplete)}
    assert 0 < len(want) < len(ROWS)
    assert engine(comparable_sql("n", include_incomplete=include_incomplete), [int(warm)]) == want
    assert engine(comparable_sql("n", warm=warm, include_incomplete=include_incomplete),
                  []) == want


def test_the_rule() -> None:
    ok = {"failed": 0, "warm": 0, "incomplete": 0}
    assert comparable(ok) and comparable({**ok, "incomplete": None})
    assert not comparable({**ok, "failed": 1}) and not comparable({**ok, "warm": 1})
    assert comparable({**ok, "warm": 1}, warm=True) and not comparable(ok, warm=True)
    assert not comparable({**ok, "incomplete": 1})
    assert comparable({**ok, "incomplete": 1}, include_incomplete=True)
