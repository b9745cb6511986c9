"""``report`` and ``plot`` with ``--dataset``: a lab campaign contributed through the collector
gives the same report and the same plot rows as ``merge`` of the same bundle into a store."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from protolens.cli.output import rounded
from protolens.collector.ingest import accept
from protolens.collector.layout import CATALOG
from protolens.collector.limits import Limits
from protolens.lab.report import report_rows
from protolens.share import export
from protolens.share.merge import merge
from protolens.store import dataset, open_ro, open_rw
from protolens.store.collector import add_token, open_catalog
from protolens.store.compare import plot_connection_shares, plot_navigations
from protolens.store.lab import campaign_navigations
from scripts.devkit.collector import cli
from scripts.devkit.store_builder import campaign_store

INCOMPLETE_EVERY = 5
"""With ``incomplete``, every fifth load of the campaign is marked incomplete (a dialog during
its load), as a recorder would have stored it."""


@pytest.fixture(params=[False, True], ids=["complete", "incomplete"])
def pair(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    db = tmp_path / "lab.db"
    campaign_store(db, campaign="camp", reps=3)
    if request.param:
        conn = open_rw(db, time.time() * 1000)
        with conn:
            conn.execute("UPDATE navigations SET incomplete = 1, "
                         "incomplete_reasons = '[\"dialog\"]' WHERE rowid % ? = 0",
                         (INCOMPLETE_EVERY,))
        conn.close()
    data = tmp_path / "collector"
    data.mkdir()
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    add_token(conn, "lab-1", "0" * 64, 0.0)
    conn.close()
    ro = open_ro(db)
    built = export.build(ro, allow=frozenset({"a.test"}), since_ms=None, now_ms=1.7639e12,
                         contributor_id="cd" * 16, keep_campaigns=frozenset({"camp"}))
    ro.close()
    export.write(built, tmp_path / "lab.tar", 1.7639e12)
    accept(data, (tmp_path / "lab.tar").read_bytes(), "lab-1", 1.7639e12, Limits())
    merged = tmp_path / "merged.db"
    conn = open_rw(merged, time.time() * 1000)
    merge(conn, [tmp_path / "lab.tar"], 1.7639e12)
    conn.close()
    return merged, data


def test_report_dataset_equals_store(pair: tuple[Path, Path]) -> None:
    db, data = pair
    conn = open_ro(db)  # the merged store has no campaign spec, so report_rows directly
    want = json.loads(json.dumps(rounded(report_rows(campaign_navigations(conn, "camp")))))
    conn.close()
    got = json.loads(cli("report", "--campaign", "camp", "--dataset", str(data),
                         "--json").stdout)
    assert len(got) == len(want) == 12
    assert all(r["speed_index_median_ms"] and r["last_visual_change_median_ms"] for r in got)
    assert got == want
    bad = cli("report", "--campaign", "nope", "--dataset", str(data), check=False)
    assert bad.returncode == 2 and "nope" in bad.stderr


def test_plot_rows_dataset_equal_store(pair: tuple[Path, Path], tmp_path: Path) -> None:
    """The same loads, by the one rule (record/comparable.py): an incomplete one is in neither
    the store's plot nor the dataset's (until 2026-11-30 both plotted it, and the dataset's
    report counted it complete)."""
    db, data = pair
    conn = open_ro(db)
    store_navs = plot_navigations(conn, "camp")
    store_shares = plot_connection_shares(conn, "camp")
    cold = "campaign = 'camp' AND failed = 0 AND warm = 0"
    left_out = {r[0] for r in conn.execute(
        f"SELECT id FROM navigations WHERE {cold} AND incomplete = 1")}
    loads = conn.execute(f"SELECT count(*) FROM navigations WHERE {cold}").fetchone()[0]
    conn.close()
    assert not left_out & {r["id"] for r in store_navs}
    assert not left_out & {r["navigation_id"] for r in store_shares}
    assert len(store_navs) == loads - len(left_out) > 0

    def strip(rows: list[dict[str, object]], key: str) -> list[dict[str, object]]:
        return [{k: v for k, v in r.items() if k != key} for r in rows]

    assert strip(dataset.plot_navigations(data, "camp"), "id") == strip(store_navs, "id")
    got = dataset.plot_connection_shares(data, "camp")
    assert strip(got, "navigation_id") == strip(store_shares, "navigation_id")
    out = tmp_path / "box.png"
    res = cli("plot", "plt-box", "--campaign", "camp", "--dataset", str(data), "--out", str(out))
    assert res.returncode == 0 and out.stat().st_size > 10_000
