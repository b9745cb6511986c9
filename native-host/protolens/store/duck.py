"""DuckDB, the store's second engine (``share/duck.py`` hands it validated bundles' Parquet
files): each table becomes a view over its files, then ``compare.COMPARE_SQL`` runs on the views,
the same text as on SQLite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

from protolens.store.compare import COMPARE_SQL, compare_where


def compare_over_parquet(views: Mapping[str, tuple[Sequence[str], str]],
                         campaign: str | None, source: str | None) -> list[dict[str, Any]]:
    """``views``: table -> (its Parquet files, the SELECT list that gives the current columns)."""
    con = duckdb.connect()
    try:
        for name, (paths, select) in views.items():
            listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
            con.execute(f"CREATE VIEW {name} AS SELECT {select} "
                        f"FROM read_parquet([{listing}], union_by_name = true)")
        where, params = compare_where(campaign, source)
        cur = con.execute(COMPARE_SQL + where + " ORDER BY n.id", params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()
