"""Shared output options for every listing command: ``--json``, ``--csv``, a table by default."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
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
        click.echo(json.dumps(rounded(rows), indent=2, default=str))
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
    for col in cols:  # epoch columns (``*_at_ms``) are shown as times: the header loses ``_ms``
        header = col[:-3] if _is_epoch(col) else col
        # URLs are already shortened in the middle: in a narrow terminal rich must fold them
        # (and times) onto a second line rather than cut their end off
        table.add_column(header, overflow="fold" if col == "url" or _is_time(col) else "ellipsis")
    for row in items:
        table.add_row(*(_table_cell(c, row.get(c)) for c in cols))
    # piped or in CI there is no terminal width: don't squeeze columns to 80 characters
    console = Console() if sys.stdout.isatty() else Console(width=max(160, 24 * len(cols)))
    console.print(table)


MS_DECIMALS = 3
"""Milliseconds keep microseconds: the DevTools Protocol's clocks (``Network.MonotonicTime``,
``TimeSinceEpoch``) count seconds to the microsecond, the finest time any record holds."""
SIGNIFICANT = 12
"""Other floats (shares, ratios, p-values) keep 12 significant digits: the binary noise of a
sum or a difference (``0.1 + 0.2``) is gone, and nothing measured is lost."""


def rounded(value: Any, key: str = "") -> Any:
    """``value`` with every float rounded to what was measured: ``*_ms`` to the microsecond,
    the rest to ``SIGNIFICANT`` digits (``-48.774000000000015`` -> ``-48.774``)."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return value
        if key.endswith("_ms"):
            return round(value, MS_DECIMALS) + 0.0  # + 0.0: no "-0.0"
        return float(f"{value:.{SIGNIFICANT}g}")
    if isinstance(value, dict):
        return {k: rounded(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, key) for v in value]
    return value


URL_WIDTH = 60
"""Table cells of a ``url`` column longer than this lose their middle."""


def _table_cell(column: str, value: Any) -> str:
    if _is_epoch(column):
        return human_time(value)
    if _is_time(column) and isinstance(value, str):
        return _iso_to_human(value)
    if column == "url" and isinstance(value, str):
        return shorten_middle(value, URL_WIDTH)
    return _cell(value)


def _is_epoch(column: str) -> bool:
    return column.endswith("_at_ms")


def _is_time(column: str) -> bool:
    return column.endswith("_at_ms") or column.endswith("_at")


def _iso_to_human(text: str) -> str:
    """``2025-11-22T11:52:25.678Z`` (the views' ``started_at``) -> ``2025-11-22 11:52:25 UTC``;
    anything else unchanged."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if when.tzinfo is None:
        return text
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def human_time(epoch_ms: Any) -> str:
    """Epoch milliseconds as ``YYYY-MM-DD HH:MM:SS`` UTC (tables only; JSON and CSV keep the
    number)."""
    if not isinstance(epoch_ms, int | float) or isinstance(epoch_ms, bool):
        return _cell(epoch_ms)
    when = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by dropping its middle (a URL keeps its host and its
    last path segment)."""
    if len(text) <= width:
        return text
    if width < 5:
        return text[:width]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def human_bytes(n: int | float | None) -> str:
    """``1234567`` -> ``1.2 MB`` (powers of 1000, as DevTools shows sizes)."""
    if n is None:
        return ""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _cell(value: Any) -> str:
    """A table or CSV cell: a mapping reads ``a.test: 6, b.test: 1`` and a list ``a, b``, not
    JSON (``--json`` keeps the structure)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value)
    return str(value)
