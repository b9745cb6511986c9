"""The connection waterfall: its series come from the record (every request exactly once, on its
connection; rows grouped by host; labels; milestones; upstream rows of a proxied load), the
figure draws those rows, and ``protolens plot waterfall ID`` writes it from a real store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from PIL import Image

from protolens.cli import main
from protolens.plots.waterfall import waterfall_figure
from protolens.plots.waterfall_series import waterfall_series
from protolens.record import NavigationRecord, parse_record
from protolens.store import ingest, open_rw
from tests.record.coalesced_record import coalesced_record

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "cdp").glob(
    "*.expected.json"))


def _fixture_records() -> list[dict[str, Any]]:
    out = []
    for f in FIXTURES:
        data = json.loads(f.read_text())
        out.extend(data if isinstance(data, list) else [data])
    return out


def _check_each_request_once_on_its_connection(rec: NavigationRecord) -> None:
    wf = waterfall_series(rec)
    by_id = {r.request_id: r for r in rec.requests}
    drawn = Counter(b.request_id for row in wf.rows if not row.upstream for b in row.bars)
    assert drawn == Counter(by_id.keys()), "every request exactly once"
    assert len(by_id) == len(rec.requests)
    for row in wf.rows:
        for b in row.bars:
            if row.upstream:
                continue
            r = by_id[b.request_id]
            assert row.key == (f"c{r.connection_id}" if r.connection_id is not None
                               else f"cache:{r.host}")
            assert (b.start_ms, b.first_byte_ms) == (r.start_ms, r.first_byte_ms)
        assert row.requests == len(row.bars) or row.upstream


@pytest.mark.parametrize("raw", _fixture_records(), ids=lambda r: r["id"][-4:])
def test_fixture_series_come_from_the_record(raw: dict[str, Any]) -> None:
    rec = parse_record(raw)
    _check_each_request_once_on_its_connection(rec)
    wf = waterfall_series(rec)
    browser_conns = {c.connection_id for c in rec.connections if not c.upstream}
    conn_rows = {int(row.key[1:]) for row in wf.rows if row.key.startswith("c")
                 and not row.key.startswith("cache:")}
    used = {r.connection_id for r in rec.requests if r.connection_id is not None}
    assert conn_rows == used and used <= browser_conns | used


def test_coalesced_rows_labels_groups_and_milestones() -> None:
    rec = parse_record(coalesced_record())
    _check_each_request_once_on_its_connection(rec)
    wf = waterfall_series(rec)
    assert [row.key for row in wf.rows] == ["c7", "c8", "cache:c.test"]
    assert wf.rows[0].label == "a.test, b.test (coalesced) · h3 · 4 req · 60.0%"
    assert wf.rows[1].label == "c.test · h2 · 1 req · 40.0%"
    assert [row.group for row in wf.rows] == ["a.test", "c.test", "c.test"]
    assert wf.milestones == (("TTFB", 4.0), ("FCP", 25.0), ("LCP", 41.0), ("load", 59.0))
    assert wf.end_ms == 59.0


def test_proxied_load_adds_upstream_rows_as_on_the_wire() -> None:
    wf = waterfall_series(parse_record(coalesced_record(upstream=True)))
    up = [row for row in wf.rows if row.upstream]
    assert [row.key for row in up] == ["u1", "u2"] and wf.rows[-2:] == tuple(up)
    assert up[0].label == "upstream a.test · h2 · 3 req · 60.0%"
    assert (up[0].bars[0].start_ms, up[0].bars[0].end_ms) == (1.0, 45.0)


def test_figure_has_one_labelled_row_per_series_row() -> None:
    wf = waterfall_series(parse_record(coalesced_record(upstream=True)))
    ax = waterfall_figure(wf).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [row.label for row in wf.rows]
    assert len(ax.get_yticks()) == 5


def _db(tmp_path: Path) -> Path:
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=0.0)
    ingest(conn, parse_record(coalesced_record(upstream=True)), {}, 0.0)
    conn.close()
    return path


def test_cli_writes_the_waterfall(tmp_path: Path) -> None:
    out = tmp_path / "wf.png"
    result = CliRunner().invoke(main, ["plot", "waterfall", "c0a1e5ce", "--db",
                                       str(_db(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    with Image.open(out) as img:
        assert img.format == "PNG" and img.size[0] > 1000


@pytest.mark.parametrize(("args", "message"), [
    (["plot", "waterfall", "ffffffff"], "no navigation with id 'ffffffff'"),
    (["plot", "waterfall"], "give a NAVIGATION_ID"),
    (["plot", "plt-box", "c0a1e5ce", "--campaign", "x", "-o", "x.png"], "takes no NAVIGATION_ID"),
])
def test_cli_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "wf.png"
    result = CliRunner().invoke(main, [*args, "--db", str(_db(tmp_path)), "-o", str(out)])
    assert result.exit_code == 2 and message in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()
