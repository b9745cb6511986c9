"""``protolens show ID``: one page load's hosts and connections with their byte shares."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.store import cc as ccstore
from protolens.store.queries import NotFound, navigation_detail, resolve_id

SUMMARY = ("id", "url", "started_at", "plt_ms", "ttfb_ms", "fcp_ms", "lcp_ms", "first_image_ms",
           "requests", "connections", "bytes", "main_family", "source", "late_attach")


@click.command("show")
@click.argument("nav_id", metavar="ID")
@db_option
@output_options
def show(nav_id: str, db: Path | None, fmt: str) -> None:
    """Show one navigation (ID or a unique prefix of it): hosts, connections, byte shares.

    Example: protolens show 3f2a9c1e --json
    """
    conn = connect_ro(db)
    try:
        detail = navigation_detail(conn, resolve_id(conn, nav_id))
        labels = ccstore.host_labels(conn) if ccstore.has_cc_table(conn) else {}
    except NotFound as exc:
        raise UserError(str(exc)) from None
    except sqlite3.Error as exc:
        raise store_failure(db, exc) from None
    for h in detail["hosts"]:  # the server's CC label (protolens cc probe), if judged
        h["cc_label"] = labels.get(h["host"])
    if fmt == "json":
        emit(detail, fmt)
        return
    if fmt == "csv":  # one flat table: the connections, the byte-share view researchers plot
        emit(detail["connections"], fmt)
        return
    emit([{"field": k, "value": detail[k]} for k in SUMMARY], fmt, title="navigation")
    emit(detail["hosts"], fmt, title="hosts",
         columns=("host", "requests", "connections", "families", "bytes", "share", "cc_label"))
    emit(detail["connections"], fmt, title="connections",
         columns=("connection_id", "host", "family", "requests", "bytes", "share", "upstream"))
