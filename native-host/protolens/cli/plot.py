"""``protolens plot KIND``: paper figures from a campaign (or testbed TCP samples)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from matplotlib.figure import Figure

from protolens.analysis.observe import METRICS
from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.plots import cwnd as cwnd_plot
from protolens.plots import figures
from protolens.store import DatabaseError, dataset
from protolens.store.compare import known_campaigns, plot_connection_shares, plot_navigations

KINDS = ("plt-box", "byte-shares", "delta-cdf", "speedup", "cwnd", "fairness", "waterfall",
         "cc-queue")
PER_LOAD = ("plt-box", "delta-cdf", "speedup")
"""The kinds drawn from one metric per load: PLT, or the one ``--metric`` names."""
FORMATS = (".png", ".svg", ".pdf")


def _arms(text: str | None, kind: str) -> tuple[str, str]:
    arms = [a.strip() for a in (text or "").split(",") if a.strip()]
    if len(arms) != 2:
        raise UserError(f"{kind}: give two arms to compare with --arms A,B (e.g. h2,h1)")
    return arms[0], arms[1]


def _dataset_rows(kind: str, data: Path, campaign: str, warm: bool) -> list[dict[str, Any]]:
    try:
        if kind == "byte-shares":
            rows = dataset.plot_connection_shares(data, campaign, warm)
        else:
            rows = dataset.plot_navigations(data, campaign, warm)
    except dataset.DatasetError as exc:
        raise UserError(str(exc)) from None
    if not rows:
        raise UserError(f"no successful loads in campaign {campaign!r} in {data}")
    return rows


def _waterfall(nav_id: str | None, db: Path | None) -> Figure:
    from protolens.plots.waterfall import waterfall_figure
    from protolens.plots.waterfall_series import waterfall_series
    from protolens.store.queries import NotFound, resolve_id
    from protolens.store.records import load_record

    if not nav_id:
        raise UserError("waterfall: give a NAVIGATION_ID (see: protolens navigations)")
    conn = connect_ro(db)
    try:
        record = load_record(conn, resolve_id(conn, nav_id))
    except NotFound as exc:
        raise UserError(str(exc)) from None
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    if not record.requests:
        raise UserError(f"waterfall: navigation {record.id} has no requests to draw")
    return waterfall_figure(waterfall_series(record))


def build(kind: str, campaign: str | None, arms: str | None, tcpstats: Path | None,
          limit: int, warm: bool, db: Path | None, nav_id: str | None = None,
          host: str | None = None, data: Path | None = None, metric: str = "plt",
          baseline: str | None = None) -> Figure:
    """The figure for ``kind`` (the I/O around the pure figure functions)."""
    if baseline is not None:
        return _baseline_delta(kind, campaign, baseline, arms, warm, db, data, metric)
    if metric != "plt" and kind not in PER_LOAD:
        raise UserError(f"{kind}: --metric applies to {', '.join(PER_LOAD)} only")
    if kind == "waterfall":
        return _waterfall(nav_id, db)
    if kind == "cc-queue":
        return _cc_queue(db, host)
    if nav_id:
        raise UserError(f"{kind}: takes no NAVIGATION_ID (only waterfall does)")
    if kind == "cwnd":
        if tcpstats is None:
            raise UserError("cwnd: give --tcpstats FILE (written by: protolens testbed tcpstats)")
        return cwnd_plot.cwnd(cwnd_plot.load_samples(tcpstats),
                              f"server cwnd ({tcpstats.name})")
    if campaign is None:
        raise UserError(f"{kind}: give --campaign NAME (see: protolens lab campaigns)")
    if kind == "fairness":
        if data is not None:
            raise UserError("fairness: not from a --dataset (lab fairness runs stay in --db)")
        return _fairness(db, campaign)
    if data is not None:
        if metric != "plt":
            raise UserError(f"--metric {metric}: a --dataset plots PLT only")
        rows = _dataset_rows(kind, data, campaign, warm)
    else:
        rows = _store_rows(kind, db, campaign, warm, metric)
    if kind == "plt-box":
        return figures.plt_box(rows, f"{figures.LABELS[metric][0]}\n{campaign}", metric)
    if kind == "byte-shares":
        return figures.byte_shares(rows, f"bytes per connection\n{campaign}", limit)
    a, b = _arms(arms, kind)
    if kind == "delta-cdf":
        return figures.delta_cdf(rows, a, b, f"{a} vs {b}\n{campaign}", metric)
    return figures.speedup(rows, a, b, f"{b} against {a}\n{campaign}", metric)


def _baseline_delta(kind: str, campaign: str | None, baseline: str, arms: str | None,
                    warm: bool, db: Path | None, data: Path | None, metric: str) -> Figure:
    """delta-cdf of the current campaign against a baseline, per page x arm x condition."""
    if kind != "delta-cdf":
        raise UserError(f"{kind}: --baseline applies to delta-cdf only")
    if campaign is None or data is not None:
        raise UserError("delta-cdf --baseline: give --campaign NAME (the current one) and a "
                        "store (--db), not --dataset")
    keep = [a.strip() for a in arms.split(",") if a.strip()] if arms else None
    rows = figures.baseline_rows(
        *([r for r in _store_rows(kind, db, name, warm, metric) if not keep or r["arm"] in keep]
          for name in (baseline, campaign)))
    return figures.delta_cdf(rows, "current", "baseline",
                             f"{campaign} against {baseline} (page x arm)", metric)


def _fairness(db: Path | None, campaign: str) -> Figure:
    from protolens.plots.fairness import fairness
    from protolens.store.fairness import fairness_rows

    conn = connect_ro(db)
    try:
        frows = fairness_rows(conn, campaign)
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    if not frows:
        raise UserError(f"no fairness results in campaign {campaign!r} "
                        "(run: protolens lab fairness)")
    return fairness(frows, f"bandwidth share on one bottleneck\n{campaign}")


def _store_rows(kind: str, db: Path | None, campaign: str, warm: bool,
                metric: str = "plt") -> list[dict[str, Any]]:
    conn = connect_ro(db)
    try:
        if kind == "byte-shares":
            rows = plot_connection_shares(conn, campaign, warm)
        else:
            rows = plot_navigations(conn, campaign, warm, metric)
        if not rows:
            names = known_campaigns(conn)
            raise UserError(f"no successful loads in campaign {campaign!r} (known: "
                            f"{', '.join(names[:5]) or 'none'})")
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    return rows


@click.command("plot")
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("nav_id", metavar="[NAVIGATION_ID]", required=False)
@click.option("--campaign", help="A lab campaign (all kinds except cwnd and waterfall).")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Output file: .png, .svg or .pdf (waterfall: waterfall-ID.png by default).")
@click.option("--arms", help="Two arms A,B for delta-cdf and speedup (A is the reference); "
              "with --baseline, the arms to keep.")
@click.option("--baseline", metavar="CAMPAIGN",
              help="delta-cdf: the current --campaign against this baseline campaign, one value "
                   "per page x arm, one line per condition.")
@click.option("--tcpstats", type=click.Path(dir_okay=False, path_type=Path),
              help="cwnd: the JSON-lines file of: protolens testbed tcpstats --out FILE.")
@click.option("--limit", type=click.IntRange(1, 500), default=40, show_default=True,
              help="byte-shares: at most this many page loads.")
@click.option("--warm", is_flag=True, help="Plot warm loads instead of cold ones.")
@click.option("--dataset", type=click.Path(file_okay=False, path_type=Path),
              help="A collector's data directory instead of --db (DuckDB over its Parquet).")
@click.option("--host", help="cc-queue: the newest stored probe of this host (default: the "
              "newest probe).")
@click.option("--metric", type=click.Choice(METRICS), default="plt", show_default=True,
              help="plt-box, delta-cdf, speedup: what each load contributes (as compare's "
                   "--metric; speed_index for CoNEXT'20 Fig. 2(b)).")
@db_option
def plot_cmd(kind: str, nav_id: str | None, campaign: str | None, out: Path | None,
             arms: str | None, tcpstats: Path | None, limit: int, warm: bool,
             db: Path | None, host: str | None = None, dataset: Path | None = None,
             metric: str = "plt", baseline: str | None = None) -> None:
    """Draw a paper figure (plt-box, byte-shares, delta-cdf, speedup, cwnd, fairness, cc-queue:
    a CC probe's queue over time, CoNEXT'20 Fig. 2(a)) or one page load's connection waterfall
    (waterfall NAVIGATION_ID; docs/WATERFALL.md).

    Example: protolens plot plt-box --campaign ifip18-loss --out plt.png

    Example: protolens plot delta-cdf --campaign conext20 --arms h2,h1 --metric speed_index
    --out si.png

    Example: protolens plot waterfall 3f2a9c1e

    Example: protolens plot delta-cdf --baseline before --campaign after --out delta.png
    """
    if out is None:
        if kind != "waterfall":
            raise UserError(f"{kind}: give --out FILE (.png, .svg or .pdf)")
        out = Path(f"waterfall-{(nav_id or 'x')[:8]}.png")
    if out.suffix.lower() not in FORMATS:
        raise UserError(f"--out: use a {', '.join(FORMATS)} file name (got {out.name!r})")
    import matplotlib

    with matplotlib.rc_context({"font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8,
                                "legend.fontsize": 7, "xtick.labelsize": 7,
                                "ytick.labelsize": 7}):  # sizes for a two-column paper
        try:
            fig = build(kind, campaign, arms, tcpstats, limit, warm, db, nav_id, host, dataset,
                        metric, baseline)
        except figures.PlotError as exc:
            raise UserError(f"{kind}: {exc}") from None
        try:
            fig.savefig(out, dpi=200)
        except OSError as exc:
            raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    click.echo(str(out))


def _cc_queue(db: Path | None, host: str | None) -> Figure:
    from protolens.cc.model import QueueTimeline
    from protolens.plots.cc_queue import cc_queue
    from protolens.store import cc as ccstore
    conn = connect_ro(db)
    try:
        got = ccstore.probe_timeline(conn, host) if ccstore.has_cc_table(conn) else None
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    finally:
        conn.close()
    if got is None:
        raise UserError("cc-queue: no stored CC probe" + (f" of {host}" if host else "")
                        + " (protolens cc probe URL)")
    row, timeline = got
    return cc_queue(row, QueueTimeline.from_json(timeline))
