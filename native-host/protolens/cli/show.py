"""``protolens show ID``: one page load for a human (page, milestones, hosts, connections with
their byte shares, requests), or ``--json`` / ``--csv`` for scripts."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.cli.show_view import ShowView, show_view
from protolens.record.coalesce import connection_hosts
from protolens.store import DatabaseError
from protolens.store import cc as ccstore
from protolens.store.queries import NotFound, navigation_detail, resolve_id
from protolens.store.records import load_record

RIGHT = frozenset({"connections", "requests", "bytes", "share", "size", "start", "duration",
                   "status", "connection", "conn"})


@click.command("show")
@click.argument("nav_id", metavar="ID")
@db_option
@output_options
def show(nav_id: str, db: Path | None, fmt: str) -> None:
    """Show one navigation (ID or a unique prefix of it): hosts, connections, byte shares,
    requests.

    Example: protolens show 3f2a9c1e --json
    """
    conn = connect_ro(db)
    try:
        full_id = resolve_id(conn, nav_id)
        detail = navigation_detail(conn, full_id)
        record = load_record(conn, full_id)
        labels = ccstore.host_labels(conn) if ccstore.has_cc_table(conn) else {}
    except NotFound as exc:
        raise UserError(str(exc)) from None
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    carried = connection_hosts(record)
    for c in detail["connections"]:  # every host of a coalesced connection, not only its first
        c["hosts"] = [c["host"]] if c["upstream"] else list(
            carried.get(c["connection_id"], (c["host"],)))
    for h in detail["hosts"]:  # the server's CC label (protolens cc probe), if judged
        h["cc_label"] = labels.get(h["host"])
    if fmt == "json":
        emit(detail, fmt)
        return
    if fmt == "csv":  # one flat table: the connections, the byte-share view researchers plot
        emit(detail["connections"], fmt)
        return
    print_view(show_view(record))
    judged = [f"{h['host']} {h['cc_label']}" for h in detail["hosts"] if h["cc_label"]]
    if judged:  # the servers' congestion control, from protolens cc probe (docs/CC.md)
        click.echo("Server CC: " + ", ".join(judged))


def _table(title: str, rows: tuple[dict[str, str], ...]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for col in rows[0] if rows else ():
        table.add_column(col, justify="right" if col in RIGHT else "left",
                         no_wrap=col in ("bar", "url"))
    for row in rows:
        table.add_row(*row.values())
    return table


def print_view(view: ShowView) -> None:
    console = Console(width=None if sys.stdout.isatty() else 140)
    for i, line in enumerate(view.header):
        console.print(line, style="bold" if i == 0 else None, markup=False, highlight=False)
    console.print()
    console.print(_table("Hosts", view.hosts))
    console.print(_table("Connections (by bytes)", view.connections))
    if view.upstream:
        console.print(_table("Upstream connections (lab proxy to server, as on the wire)",
                             view.upstream))
    console.print(_table(f"Requests ({len(view.requests)})", view.requests))
