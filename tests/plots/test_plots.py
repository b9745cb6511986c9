"""Every plot kind from a small real store (or captured ss output): the expected number of
series, inspected on the Figure before saving, then rendered to PNG and SVG through the CLI."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Rectangle

from protolens.cli import main
from protolens.plots import cwnd as cwnd_plot
from protolens.plots import figures
from protolens.store import open_ro
from protolens.store.compare import plot_connection_shares, plot_navigations
from protolens.testbed.tcpstats import parse_stream
from scripts.devkit.store_builder import campaign_store

SS = Path(__file__).parents[1] / "testbed" / "fixtures" / "ss-tin-established.txt"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("plots") / "s.db"
    campaign_store(db, reps=3, shift_ms=1500.0)
    return db


def _labelled(lines: list[Line2D]) -> list[Line2D]:
    return [ln for ln in lines if not str(ln.get_label()).startswith("_")]


def test_plt_box_has_a_box_and_a_mean_per_page_and_arm(store: Path) -> None:
    fig = figures.plt_box(plot_navigations(open_ro(store), "camp"), "t")
    axes = [ax for ax in fig.axes if ax.get_xlabel()]
    assert [ax.get_title() for ax in axes] == ["condition: clean", "condition: lossy"]
    for ax in axes:
        boxes = [p for p in ax.patches if isinstance(p, PathPatch)]
        means = [ln for ln in ax.lines if ln.get_marker() == "D"]
        assert len(boxes) == 2 * 3 and len(means) == 2 * 3
        assert ax.get_ylabel() == "page load time (s)"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["h1", "h2", "h3"]


def test_byte_shares_has_one_segment_per_connection(store: Path) -> None:
    conn = open_ro(store)
    rows = plot_connection_shares(conn, "camp")
    expected = sqlite3.connect(store).execute(
        "SELECT count(*) FROM connections c JOIN navigations n ON n.id = c.navigation_id "
        "WHERE n.campaign = 'camp' AND c.upstream = 0").fetchone()[0]
    fig = figures.byte_shares(rows, "t", limit=500)
    (ax,) = fig.axes
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == expected > 36
    assert len(ax.get_xticks()) == 36
    tops = {}
    for bar in bars:
        x = round(bar.get_x(), 3)
        tops[x] = max(tops.get(x, 0.0), bar.get_y() + bar.get_height())
    assert all(abs(t - 100.0) < 1e-6 for t in tops.values())  # shares stack to 100%
    limited = figures.byte_shares(rows, "t", limit=5)
    assert len(limited.axes[0].get_xticks()) == 5


def test_delta_cdf_has_one_line_per_condition(store: Path) -> None:
    fig = figures.delta_cdf(plot_navigations(open_ro(store), "camp"), "h2", "h1", "t")
    (ax,) = fig.axes
    lines = _labelled(ax.lines)
    assert [ln.get_label() for ln in lines] == ["clean (2 pages)", "lossy (2 pages)"]
    lossy = lines[1].get_xdata()
    assert min(lossy) > 1.2  # h2 is 1.5 s slower under loss on every page
    assert "PLT(h2) - PLT(h1)" in ax.get_xlabel()


def test_speedup_has_a_bar_per_page_and_condition_sorted_by_size(store: Path) -> None:
    fig = figures.speedup(plot_navigations(open_ro(store), "camp"), "h2", "h1", "t")
    (ax,) = fig.axes
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 2 * 2
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["small", "large"]
    by_cond = {t.get_text(): t for t in ax.get_legend().get_texts()}
    assert set(by_cond) == {"clean", "lossy"}
    heights = sorted(b.get_height() for b in bars)
    assert heights[-1] > 20 and abs(heights[0]) < 10  # lossy: h1 much faster; clean: no gain


def test_missing_arm_is_a_plot_error(store: Path) -> None:
    with pytest.raises(figures.PlotError, match="both arms h2 and h9"):
        figures.delta_cdf(plot_navigations(open_ro(store), "camp"), "h2", "h9", "t")
    with pytest.raises(figures.PlotError):
        figures.plt_box([], "t")


def _tcpstats(tmp: Path) -> Path:
    text = SS.read_text()
    stream = "".join(f"@ts {1_000_000_000 + k * 10_000_000}\n{text}" for k in range(5))
    rows = parse_stream(stream)
    out = tmp / "tcp.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_cwnd_has_one_line_per_connection(tmp_path: Path) -> None:
    samples = cwnd_plot.load_samples(_tcpstats(tmp_path))
    fig = cwnd_plot.cwnd(samples, "t")
    (ax,) = fig.axes
    lines = _labelled(ax.lines)
    assert len(lines) == 6
    assert sorted(int(str(ln.get_label()).rsplit(" ", 1)[1]) for ln in lines) == \
        [52172, 52182, 52194, 52202, 52204, 52206]
    assert max(lines[0].get_xdata()) == pytest.approx(0.04)
    assert len(_labelled(cwnd_plot.cwnd(samples, "t", max_lines=2).axes[0].lines)) == 2


@pytest.mark.parametrize("kind,extra", [
    ("plt-box", []), ("byte-shares", []), ("delta-cdf", ["--arms", "h2,h1"]),
    ("speedup", ["--arms", "h2,h3"]),
])
@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_cli_renders_each_kind(store: Path, tmp_path: Path, kind: str, extra: list[str],
                               suffix: str, magic: bytes) -> None:
    out = tmp_path / f"fig{suffix}"
    res = CliRunner().invoke(main, ["plot", kind, "--campaign", "camp", "--db", str(store),
                                    "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(magic)


def test_cli_cwnd(tmp_path: Path) -> None:
    out = tmp_path / "cwnd.svg"
    res = CliRunner().invoke(main, ["plot", "cwnd", "--tcpstats", str(_tcpstats(tmp_path)),
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().count("client port") == 6


@pytest.mark.parametrize("args,message", [
    (["plt-box", "--campaign", "camp", "--out", "x.jpg"], "use a .png, .svg, .pdf"),
    (["plt-box", "--out", "x.png"], "give --campaign"),
    (["plt-box", "--campaign", "nope", "--out", "x.png"], "no successful loads in campaign"),
    (["delta-cdf", "--campaign", "camp", "--out", "x.png"], "give two arms"),
    (["speedup", "--campaign", "camp", "--arms", "h1,h7", "--out", "x.png"], "both arms"),
    (["cwnd", "--out", "x.png"], "give --tcpstats"),
])
def test_cli_errors(store: Path, tmp_path: Path, args: list[str], message: str) -> None:
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    res = CliRunner().invoke(main, ["plot", *args, "--db", str(store)])
    assert res.exit_code == 2 and message in res.output, res.output
    assert list(tmp_path.iterdir()) == []


def test_cli_cwnd_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t_ns": 1, "peer_port": 5, "cwnd": 3}\nnot json\n')
    res = CliRunner().invoke(main, ["plot", "cwnd", "--tcpstats", str(bad), "--out",
                                    str(tmp_path / "c.png")])
    assert res.exit_code == 2 and "bad.jsonl:2: not JSON" in res.output


def test_byte_shares_use_the_proxys_upstream_connections_where_reported(
        tmp_path: Path) -> None:
    from protolens.store import open_rw
    from protolens.store.policy import store_upstream

    db = tmp_path / "s.db"
    campaign_store(db, reps=1, shift_ms=0.0)
    rw = open_rw(db, time.time() * 1000)
    nav_id = rw.execute("SELECT id FROM navigations WHERE campaign = 'camp' AND failed = 0 "
                        "ORDER BY id LIMIT 1").fetchone()[0]
    # an H2-Parallel load: one browser connection to the proxy, two upstream on the wire
    store_upstream(rw, nav_id, [
        {"id": 1, "local_port": 40001, "host": "a.test", "family": "h2", "requests": 7,
         "bytes": 300_000},
        {"id": 2, "local_port": 40002, "host": "a.test", "family": "h2", "requests": 6,
         "bytes": 100_000}], started_at_ms=0.0)
    rw.close()
    rows = plot_connection_shares(open_ro(db), "camp")
    mine = [r for r in rows if r["navigation_id"] == nav_id]
    assert sorted((r["connection_id"], round(r["share"], 3)) for r in mine) == \
        [(40001, 0.75), (40002, 0.25)]
    others = [r for r in rows if r["navigation_id"] != nav_id]
    assert others and all(r["upstream"] == 0 for r in others)
    (ax,) = figures.byte_shares(rows, "t", limit=500).axes
    assert len([p for p in ax.patches if isinstance(p, Rectangle)]) == len(rows)
