"""The research views (m006_research_views) against counts computed from the base table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scripts.devkit.store_builder import campaign_store


def test_arm_summary_and_daily_protocols(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=3)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT page, condition, arm, loads, mean_plt_ms FROM arm_summary "
                        "WHERE campaign = 'camp' ORDER BY 1, 2, 3").fetchall()
    assert len(rows) == 2 * 2 * 3 and {r[3] for r in rows} == {3}
    for page, cond, arm, _, mean in rows:
        want = conn.execute("SELECT avg(load_ms) FROM navigations WHERE page = ? AND "
                            "condition = ? AND arm = ?", (page, cond, arm)).fetchone()[0]
        assert abs(mean - want) < 1e-9
    daily = conn.execute("SELECT family, sum(navigations) FROM daily_protocols "
                         "GROUP BY family ORDER BY 1").fetchall()
    assert daily == [("h1", 12), ("h2", 12), ("h3", 12)]


def test_arm_summary_takes_the_loads_compare_takes(tmp_path: Path) -> None:
    """arm_summary (m020) by the one rule (record/comparable.py): a load marked incomplete leaves
    its cell's count and mean; the view's cells are those of the rule's own SQL text."""
    from protolens.record.comparable import comparable_sql

    db = tmp_path / "s.db"
    campaign_store(db, reps=3)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE navigations SET incomplete = 1, incomplete_reasons = '[\"dialog\"]' "
                     "WHERE rowid % 4 = 0")
    got = conn.execute("SELECT page, condition, arm, loads, mean_plt_ms FROM arm_summary "
                       "WHERE campaign = 'camp' ORDER BY 1, 2, 3").fetchall()
    want = conn.execute("SELECT n.page, n.condition, n.arm, count(*), avg(n.load_ms) "
                        f"FROM navigations n WHERE n.campaign = 'camp' AND "
                        f"{comparable_sql('n', warm=False)} GROUP BY 1, 2, 3 "
                        "ORDER BY 1, 2, 3").fetchall()
    assert got == want and sum(r[3] for r in got) == 36 - 9
