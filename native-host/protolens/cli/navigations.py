"""``protolens navigations``: the most recent page loads, one line each."""

from __future__ import annotations

from pathlib import Path

import click

from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.output import emit, output_options
from protolens.store import DatabaseError
from protolens.store.queries import recent_navigations

COLUMNS = ("id", "started_at", "url", "plt_ms", "ttfb_ms", "requests", "connections", "bytes",
           "main_family", "source", "campaign", "arm")


@click.command("navigations")
@click.option("--last", "last", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many of the most recent navigations to list (newest first).")
@db_option
@output_options
def navigations(last: int, db: Path | None, fmt: str) -> None:
    """List recorded page loads, newest first (read-only).

    Example: protolens navigations --last 10 --json
    """
    try:
        rows = recent_navigations(connect_ro(db), last)
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    if fmt == "table":
        for row in rows:
            row["id"] = row["id"][:8]
    emit(rows, fmt, title="navigations", columns=COLUMNS if fmt == "table" else None)
