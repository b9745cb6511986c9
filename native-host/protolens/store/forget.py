"""Deleting recorded data (``protolens db forget``): the navigations of one site,
or all of them, with every row that belongs to them, in one transaction.

Which site a navigation belongs to is its page's host (``navigations.origin``): the domain itself
and its subdomains, as the extension's allowlist matches (src/policy/settings.ts). The rows that
belong to a navigation are found from the schema, not from a list: every table with a foreign key
to ``navigations`` (``requests``, ``connections``, ``hosts``, ``navigation_policies`` today), so a
table added later is forgotten too. ``secure_delete`` overwrites the deleted content in the file
(https://www.sqlite.org/pragma.html#pragma_secure_delete) and a checkpoint empties the WAL, so
the deleted pages do not linger on disk.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from urllib.parse import urlsplit

from protolens.store.tx import transaction

_DOMAIN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
_BATCH = 500


class ForgetError(ValueError):
    """The site argument is not a domain name; the message says why."""


@dataclass(frozen=True)
class Deleted:
    """How many rows one table lost."""

    table: str
    """The table's name."""
    rows: int
    """Rows deleted from it."""


def normalize_site(text: str) -> str:
    """``Example.COM.`` -> ``example.com``; raise ``ForgetError`` for anything not a host name."""
    site = text.strip().lower().removeprefix("*.").rstrip(".")
    if not _DOMAIN.match(site):
        raise ForgetError(f"--site: {text!r} is not a domain name (e.g. example.com)")
    return site


def on_site(origin: str, site: str) -> bool:
    """Is a page at ``origin`` on ``site`` (the domain or one of its subdomains)?"""
    host = (urlsplit(origin).hostname or "").rstrip(".")
    return host == site or host.endswith("." + site)


def _child_tables(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(table, column) of every foreign key to ``navigations``, in name order."""
    out = []
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for name in names:
        keys = conn.execute('SELECT "table", "from" FROM pragma_foreign_key_list(?)', (name,))
        for fk in keys:
            if fk[0] == "navigations":
                out.append((name, str(fk[1])))
    return out


def forget(conn: sqlite3.Connection, site: str | None) -> list[Deleted]:
    """Delete the navigations on ``site`` (every navigation when None) and their rows.

    Returns the rows deleted per table, ``navigations`` first. One transaction: on any error
    nothing is deleted.
    """
    conn.execute("PRAGMA secure_delete = ON")
    with transaction(conn):
        if site is None:
            ids = [str(r[0]) for r in conn.execute("SELECT id FROM navigations")]
        else:
            ids = [str(r[0]) for r in conn.execute("SELECT id, origin FROM navigations")
                   if on_site(str(r[1]), site)]
        counts = {"navigations": 0} | {t: 0 for t, _ in _child_tables(conn)}
        for i in range(0, len(ids), _BATCH):
            batch = ids[i:i + _BATCH]
            marks = ", ".join("?" for _ in batch)
            # children first: their counts would be lost to ON DELETE CASCADE otherwise
            for table, column in _child_tables(conn):
                cur = conn.execute(f'DELETE FROM "{table}" WHERE "{column}" IN ({marks})', batch)
                counts[table] += cur.rowcount
            cur = conn.execute(f"DELETE FROM navigations WHERE id IN ({marks})", batch)
            counts["navigations"] += cur.rowcount
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return [Deleted(t, n) for t, n in counts.items()]
