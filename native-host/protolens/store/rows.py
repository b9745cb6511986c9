"""Query results as dicts (column name -> value), for the store's readers."""

from __future__ import annotations

import sqlite3
from typing import Any


def dicts(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]
