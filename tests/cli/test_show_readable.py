"""``protolens show`` for a human, its ``--json`` host lists, and tidy tables (human times, URLs
shortened in the middle), on a real SQLite store through the real CLI (CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.cli.output import human_time, shorten_middle
from protolens.cli.show_view import bar, show_view
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from protolens.store.lab import ensure_campaign
from tests.record.coalesced_record import LONG, coalesced_record

NOW = 1_763_812_400_000.0


def _db(tmp_path: Path, upstream: bool = False) -> Path:
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=NOW)
    ingest(conn, parse_record(coalesced_record(upstream)), {}, NOW)
    conn.close()
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _line(out: str, *needles: str) -> str:
    lines = [ln for ln in out.splitlines() if all(n in ln for n in needles)]
    assert len(lines) == 1, (needles, out)
    return lines[0]


def test_show_lists_every_host_of_a_coalesced_connection(tmp_path: Path) -> None:
    code, out, _ = run("show", "c0a1e5ce", "--db", str(_db(tmp_path)))
    assert code == 0, out
    row7 = _line(out, "a.test, b.test (coalesced)")
    assert "h3" in row7 and "10.0.0.1:443" in row7 and "60.0%" in row7 and "60.0 kB" in row7
    assert "█" * 12 in row7 and "█" * 13 not in row7  # 60 % of a 20-character bar
    row8 = _line(out, "10.0.0.2:443")
    assert "c.test" in row8 and "coalesced" not in row8 and "40.0%" in row8


def test_show_page_milestones_hosts_and_requests(tmp_path: Path) -> None:
    code, out, _ = run("show", "c0a1e5ce", "--db", str(_db(tmp_path)))
    assert code == 0
    assert out.splitlines()[0] == "https://a.test/page/"
    assert _line(out, "TTFB 4 ms", "FCP 25 ms", "LCP 41 ms", "load 59 ms")
    assert "started 2025-11-22 " in out and "UTC" in out  # a time, not 1763812345678.5
    host_b = _line(out, "│ b.test ")
    assert "h3" in host_b and "10.0 kB" in host_b and "10.0%" in host_b
    # the requests table: one row per request, no JSON inside a cell
    assert "{" not in out and out.count("│ GET ") == 6
    cache = _line(out, "│ GET ", "c.test", "cache")
    assert "0 B" in cache
    long_row = _line(out, "END.png")
    assert "https://b.test/assets/" in long_row and "…" in long_row and LONG not in long_row
    assert "SpeedIndex" not in out  # recorded without paint capture: no visual line


def test_show_the_visual_metrics_when_recorded(tmp_path: Path) -> None:
    rec = coalesced_record(False)
    rec["milestones"].update(first_visual_change_ms=30.0, speed_index_ms=44.4,
                             visual_complete_85_ms=50.0, visual_complete_99_ms=52.0,
                             last_visual_change_ms=60.0)
    path = tmp_path / "v.db"
    conn = open_rw(path, now_ms=NOW)
    ingest(conn, parse_record(rec), {}, NOW)
    conn.close()
    code, out, _ = run("show", "c0a1e5ce", "--db", str(path))
    assert code == 0, out
    assert _line(out, "first visual change 30 ms", "SpeedIndex 44 ms", "VC85 50 ms", "VC99 52 ms",
                 "last visual change 60 ms")
    code, out, _ = run("show", "c0a1e5ce", "--db", str(path), "--json")
    assert code == 0, out
    detail = json.loads(out)  # --json carries what the human view prints
    assert [detail[k] for k in ("first_visual_change_ms", "speed_index_ms",
                                "visual_complete_85_ms", "visual_complete_99_ms",
                                "last_visual_change_ms")] == [30.0, 44.4, 50.0, 52.0, 60.0]


def test_show_upstream_connections_of_a_proxied_load(tmp_path: Path) -> None:
    code, out, _ = run("show", "c0a1e5ce", "--db", str(_db(tmp_path, upstream=True)))
    assert code == 0
    after = out.split("Upstream connections", 1)[1].split("Requests", 1)[0]
    assert "10.9.0.1:443" in after and after.count("│ ") >= 2 and "coalesced" not in after


def test_show_json_keeps_its_shape_and_adds_hosts(tmp_path: Path) -> None:
    code, out, _ = run("show", "c0a1e5ce", "--db", str(_db(tmp_path, upstream=True)), "--json")
    assert code == 0
    detail = json.loads(out)
    for key in ("id", "url", "started_at", "plt_ms", "requests", "connections", "hosts"):
        assert key in detail
    conns = {(c["upstream"], c["connection_id"]): c for c in detail["connections"]}
    assert conns[(0, 7)]["hosts"] == ["a.test", "b.test"] and conns[(0, 7)]["host"] == "a.test"
    assert conns[(0, 8)]["hosts"] == ["c.test"]
    assert conns[(1, 1)]["hosts"] == ["a.test"]


def test_lab_campaigns_prints_human_times(tmp_path: Path) -> None:
    path = _db(tmp_path)
    conn = open_rw(path, now_ms=NOW)
    ensure_campaign(conn, "tidy", seed=1, spec={}, version="0", now_ms=NOW)
    conn.close()
    code, out, _ = run("lab", "campaigns", "--db", str(path))
    assert code == 0 and "2025-11-22 11:53:20 UTC" in out and "1763812400000" not in out
    assert "created_at" in out and "created_at_ms" not in out  # the header says it is a time
    code, out, _ = run("lab", "campaigns", "--db", str(path), "--json")
    assert json.loads(out)[0]["created_at_ms"] == NOW  # JSON keeps the number


@pytest.mark.parametrize(("width", "text"), [(10, "abcdefghijklmnop"), (11, "x" * 40),
                                             (60, LONG)])
def test_shorten_middle_keeps_both_ends(width: int, text: str) -> None:
    short = shorten_middle(text, width)
    assert len(short) == width and "…" in short
    head, tail = short.split("…")
    assert text.startswith(head) and text.endswith(tail) and len(head) >= len(tail) >= 1
    assert shorten_middle("short", 10) == "short"


def test_bar_and_time_helpers() -> None:
    assert bar(0.0) == "" and bar(1.0) == "█" * 20 and bar(2.0) == "█" * 20
    assert bar(0.5) == "█" * 10 and bar(0.53).startswith("█" * 10) and len(bar(0.53)) == 11
    assert human_time(0) == "1970-01-01 00:00:00 UTC" and human_time(None) == ""


def test_show_view_has_one_row_per_request_and_connection() -> None:
    view = show_view(parse_record(coalesced_record(upstream=True)))
    assert len(view.requests) == 6 and len(view.connections) == 2 and len(view.upstream) == 2
    assert [c["connection"] for c in view.connections] == ["7", "8"]


def test_navigations_table_has_human_times_and_middle_shortened_urls(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=NOW)
    rec = coalesced_record()
    rec["page"]["url"] = LONG
    ingest(conn, parse_record(rec), {}, NOW)
    conn.close()
    code, out, _ = run("navigations", "--db", str(path))
    assert code == 0
    row = _line(out, "c0a1e5ce")
    assert "2025-11-22 11:52:25 UTC" in row and "T11:52" not in out
    assert "https://b.test/assets/" in row and "END.png" in row and "…" in row
    code, out, _ = run("navigations", "--db", str(path), "--json")
    assert json.loads(out)[0]["started_at"].startswith("2025-11-22T11:52:25")  # JSON unchanged


def test_show_says_what_is_missing_of_an_incomplete_load(tmp_path: Path) -> None:
    rec = coalesced_record()
    rec["page"].update(kind="soft", incomplete=True, incomplete_reasons=["cap_after_load"],
                       open_at_end=2, downloads=1, not_seen=["service_worker_fetches"])
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=NOW)
    ingest(conn, parse_record(rec), {}, NOW)
    conn.close()
    code, out, _ = run("show", rec["id"], "--db", str(path))
    assert code == 0, out
    note = _line(out, "note:")
    for text in ("soft navigation", "incomplete: cap_after_load", "2 request(s) open at the end",
                 "1 download(s)", "not seen: service_worker_fetches"):
        assert text in note, note
    _, quiet, _ = run("show", coalesced_record()["id"], "--db", str(_db(tmp_path / "q")))
    assert "incomplete" not in quiet and "not seen" not in quiet
