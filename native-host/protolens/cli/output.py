"""Shared output options for every listing command: ``--json``, ``--csv``, a table by default."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

F = TypeVar("F", bound=Callable[..., Any])


def output_options(func: F) -> F:
    """Add ``--json`` / ``--csv`` (mutually exclusive) as a ``fmt`` argument."""
    func = click.option("--csv", "fmt", flag_value="csv", help="Print CSV.")(func)
    func = click.option("--json", "fmt", flag_value="json", help="Print JSON.")(func)
    return click.option("--table", "fmt", flag_value="table", default=True, hidden=True)(func)


def emit(rows: Sequence[dict[str, Any]] | dict[str, Any], fmt: str, title: str | None = None,
         columns: Sequence[str] | None = None) -> None:
    """Print rows (or one object) as JSON, CSV or a rich table."""
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    items = [rows] if isinstance(rows, dict) else list(rows)
    cols = list(columns or (items[0].keys() if items else []))
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
        writer.writeheader()
        for row in items:
            writer.writerow({k: _cell(row.get(k)) for k in cols})
        click.echo(buf.getvalue(), nl=False)
        return
    table = Table(title=title)
    for col in cols:
        table.add_column(col)
    for row in items:
        table.add_row(*(_cell(row.get(c)) for c in cols))
    # piped or in CI there is no terminal width: don't squeeze columns to 80 characters
    console = Console() if sys.stdout.isatty() else Console(width=max(120, 14 * len(cols)))
    console.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)
