"""``protolens lab reproduce conext20-igor``: CoNEXT'20 Table 1 on the testbed (server CC x object
size x MTU), the paper's cells beside ours, untuned, and a confusion matrix of the labels
against the true CC. The run is ``cc.reproduce.reproduce_igor``; this module prints. Called
from ``protolens.cli.reproduce``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from protolens.cc import igor
from protolens.cc.reproduce import NAME, PAPER, reproduce_igor
from protolens.cc.survey import StoreProbeError
from protolens.cli.db import db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit
from protolens.testbed import TestbedError

COLUMNS = ("server_cc", "mtu", "size_kb", "max_queue_pct", "time_to_max_s", "first_loss_s",
           "label", "truth", "right", "paper_max_queue_pct", "paper_time_to_max_s")


def print_igor(quick: bool, testbed: str, as_json: bool, db: Path | None) -> None:
    """Run the grid, store and print; exit 1 if a cell failed."""
    err = Console(stderr=True)

    def progress(what: str, label: str | None, error: str | None) -> None:
        err.print(f"error: {what}: {error}" if label is None else f"{what}: {label}",
                  markup=False, highlight=False, soft_wrap=True)

    try:
        rep = reproduce_igor(quick, testbed, db_path(db), progress)
    except (TestbedError, StoreProbeError) as exc:
        raise UserError(str(exc)) from None
    if as_json:
        emit(rep.as_json(), "json")
    else:
        emit(rep.rows, "table", title=f"{NAME}: queue occupancy per server CC, size and MTU "
             "(paper = CoNEXT'20 Table 1)", columns=COLUMNS)
        emit([{"truth": t, **counts} for t, counts in rep.confusion.items()], "table",
             title="confusion matrix (rows: true class, columns: label)")
        click.echo(f"\nPaper: {PAPER}\n  finding: {igor.FINDING}\nProtoLens measured:")
        for line in rep.lines:
            click.echo(f"  {line}")
    if rep.errors:
        raise SystemExit(1)
