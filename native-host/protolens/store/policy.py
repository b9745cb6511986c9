"""Policy tables (docs/POLICY.md): stored per-domain rules, the policy and mechanism that applied
to each host of each navigation, and the proxy's upstream connections of a lab navigation.

``policies`` holds the rules ``protolens policy`` manages. ``navigation_policies`` is filled for
lab loads by the lab runner after the load (from the load's arm or policy file) and can be filled
for any record with ``record_navigation_policies``. Upstream connections go into ``connections``
with ``upstream = 1`` (docs/SCHEMA.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from protolens.policy.mechanism import Enforcement
from protolens.policy.rules import PolicyError, Rule, conflict, make_rule
from protolens.record import columns
from protolens.store.tx import transaction

_POLICY_COLUMNS = columns.stored("navigation_policies")
_INSERT_POLICY = (f"INSERT OR REPLACE INTO navigation_policies ({', '.join(_POLICY_COLUMNS)}) "
                  f"VALUES ({', '.join('?' for _ in _POLICY_COLUMNS)})")


def store_record_policies(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """The record's own ``policies`` (everyday browser: relay, CDP throttling), as
    ``navigation_policies`` rows (``RecordRows.policies``); called inside the ingest
    transaction."""
    if rows:
        conn.executemany(_INSERT_POLICY, rows)


def rules(conn: sqlite3.Connection) -> list[Rule]:
    """Every stored rule, most specific first."""
    out = [make_rule(r[0], r[1], r[2], r[3]) for r in conn.execute(
        "SELECT domain, arm, latency_ms, throughput_kbps FROM policies")]
    return sorted(out, key=lambda r: (r.specificity(), r.domain), reverse=True)


def has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                        "AND name = 'policies'").fetchone() is not None


def add_rule(conn: sqlite3.Connection, rule: Rule, *, now_ms: float,
             replace: bool = False) -> None:
    """Store a rule; ``PolicyError`` on a conflict unless ``replace``."""
    with transaction(conn):
        why = None if replace else conflict(rules(conn), rule)
        if why:
            raise PolicyError(why)
        conn.execute("INSERT OR REPLACE INTO policies (domain, kind, arm, latency_ms, "
                     "throughput_kbps, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
                     (rule.domain, rule.kind, str(rule.arm), rule.latency_ms,
                      rule.throughput_kbps, now_ms))


def remove_rule(conn: sqlite3.Connection, domain: str) -> bool:
    """Delete the rule for exactly this pattern; False if there was none."""
    cur = conn.execute("DELETE FROM policies WHERE domain = ?", (domain,))
    return cur.rowcount > 0


def record_navigation_policies(conn: sqlite3.Connection, navigation_id: str,
                               applied: Mapping[str, Enforcement]) -> None:
    """One row per host: the rule, arm and mechanism that applied (replaces earlier rows)."""
    conn.executemany(
        "INSERT OR REPLACE INTO navigation_policies (navigation_id, host, rule, arm, mechanism) "
        "VALUES (?, ?, ?, ?, ?)",
        [(navigation_id, host, e.rule, e.arm, e.mechanism) for host, e in applied.items()])


def navigation_hosts(conn: sqlite3.Connection, navigation_id: str) -> list[str]:
    """The hosts of a stored navigation (from its requests)."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT host FROM requests WHERE navigation_id = ? ORDER BY host",
        (navigation_id,))]


def navigation_starts(conn: sqlite3.Connection, load_id: str) -> list[tuple[str, float]]:
    """(id, started_at_ms) of a load's navigations, in order."""
    return [(r[0], float(r[1])) for r in conn.execute(
        "SELECT id, started_at_ms FROM navigations WHERE load_id = ? ORDER BY started_at_ms",
        (load_id,))]


def store_upstream(conn: sqlite3.Connection, navigation_id: str,
                   upstream: Sequence[Mapping[str, Any]], started_at_ms: float) -> None:
    """The proxy's upstream connections of one navigation as ``connections`` rows, upstream = 1.

    ``upstream`` items: ``id, host, family, remote_ip, remote_port, requests, bytes,
    first_epoch_ms, last_epoch_ms`` (the proxy's report). Shares are within the navigation's
    upstream connections.
    """
    total = sum(int(u["bytes"]) for u in upstream)
    conn.execute("DELETE FROM connections WHERE navigation_id = ? AND upstream = 1",
                 (navigation_id,))
    conn.executemany(
        "INSERT INTO connections (navigation_id, connection_id, upstream, host, family, "
        "remote_ip, remote_port, requests, bytes, share, first_ms, last_ms) "
        "VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(navigation_id, int(u.get("local_port") or u["id"]), u["host"], u["family"],
          u.get("remote_ip"),
          u.get("remote_port"), int(u["requests"]), int(u["bytes"]),
          int(u["bytes"]) / total if total else 0.0,
          _rel(u.get("first_epoch_ms"), started_at_ms), _rel(u.get("last_epoch_ms"),
                                                              started_at_ms))
         for u in upstream])


def _rel(epoch_ms: Any, start: float) -> float | None:
    return None if epoch_ms is None else float(epoch_ms) - start


def navigation_policy_rows(conn: sqlite3.Connection, navigation_id: str
                           ) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(
        "SELECT host, rule, arm, mechanism, rule_ids FROM navigation_policies "
        "WHERE navigation_id = ? "
        "ORDER BY host", (navigation_id,))]


def upstream_rows(conn: sqlite3.Connection, navigation_id: str) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(
        "SELECT connection_id, host, family, remote_port, requests, bytes, share "
        "FROM connections WHERE navigation_id = ? AND upstream = 1 ORDER BY connection_id",
        (navigation_id,))]


