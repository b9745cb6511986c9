"""``protolens lab reproduce conext20-igor``: CoNEXT'20 Table 1 on the testbed (server CC x object
size x MTU), the paper's cells beside ours, untuned, and a confusion matrix of the labels
against the true CC. Called from ``protolens.cli.lab``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from protolens.cc import igor
from protolens.cc.probe import ProbeResult
from protolens.cc.reproduce import result_row, run_grid
from protolens.cli.cc import _store
from protolens.cli.errors import UserError
from protolens.cli.output import emit
from protolens.testbed import TestbedError

NAME = "conext20-igor"
COLUMNS = ("server_cc", "mtu", "size_kb", "max_queue_pct", "time_to_max_s", "first_loss_s",
           "label", "truth", "right", "paper_max_queue_pct", "paper_time_to_max_s")


def reproduce_igor(quick: bool, testbed: str, as_json: bool, db: Path | None) -> None:
    """Run the grid (``--quick``: 160 and 320 KB at 500-byte MTU only), store and print."""
    cells = (igor.grid(sizes=(160_000, 320_000), packets=(500,)) if quick else igor.grid())
    err = Console(stderr=True)
    errors: list[str] = []

    def progress(cell: igor.Cell, res: ProbeResult | None, msg: str | None) -> None:
        what = f"{cell.cc} {cell.size // 1000} KB at {cell.packet_bytes} B"
        if res is None:
            errors.append(f"{what}: {msg}")
            err.print(f"error: {what}: {msg}", markup=False, highlight=False, soft_wrap=True)
            return
        _store(db, res, "lab")
        err.print(f"{what}: {res.verdict.label}", markup=False, highlight=False, soft_wrap=True)

    try:
        results = run_grid(cells, testbed=testbed, on_result=progress)
    except TestbedError as exc:
        raise UserError(str(exc)) from None
    rows = igor.table_rows(result_row(c, r) for c, r, _ in results if r is not None)
    matrix = igor.confusion(rows)
    lines = igor.summary_lines(rows)
    if as_json:
        out: dict[str, Any] = {"experiment": NAME, "paper": "CoNEXT'20 (shared/seeds/002) "
                               "Sec. 4.1, Table 1", "paper_finding": igor.FINDING,
                               "quick": quick, "rows": rows, "confusion": matrix,
                               "measured": lines, "errors": errors}
        emit(out, "json")
    else:
        emit(rows, "table", title=f"{NAME}: queue occupancy per server CC, size and MTU "
             "(paper = CoNEXT'20 Table 1)", columns=COLUMNS)
        emit([{"truth": t, **counts} for t, counts in matrix.items()], "table",
             title="confusion matrix (rows: true class, columns: label)")
        click.echo(f"\nPaper: CoNEXT'20 (shared/seeds/002) Sec. 4.1, Table 1\n  finding: "
                   f"{igor.FINDING}\nProtoLens measured:")
        for line in lines:
            click.echo(f"  {line}")
    if errors:
        raise SystemExit(1)
