"""``protolens replay LOG`` / ``protolens replay --navigation ID``: the record(s) the extension's
recorder core makes of a DevTools log (replay/node.py runs it), printed as ``protolens show``
prints a stored one, or ``--json`` (the records as the recorder made them) / ``--csv`` (their
requests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.cli.show import print_view
from protolens.cli.show_view import show_view
from protolens.replay.node import LogRejected, ReplayError, replay
from protolens.store import DatabaseError
from protolens.store.logs import load_log
from protolens.store.queries import NotFound, resolve_id

CSV_COLUMNS = ("record_id", "request_id", "url", "resource_type", "status", "protocol",
               "connection_id", "encoded_bytes", "start_ms", "end_ms", "failed")


def _read(log: Path) -> bytes:
    try:
        return log.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{log}: no such file") from None
    except OSError as exc:
        raise UserError(f"{log}: {exc.strerror or exc}") from None


def _stored(nav_id: str, db: Path | None) -> tuple[bytes, dict[str, Any], str]:
    conn = connect_ro(db)
    try:
        full = resolve_id(conn, nav_id)
        stored = load_log(conn, full)
    except NotFound as exc:
        raise UserError(str(exc)) from None
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    finally:
        conn.close()
    if stored is None:
        raise UserError(f"navigation {full} has no stored log (the log tap keeps one when it is "
                        "on: the options page's switch, or protolens lab run --save-log)")
    # the stored record's id for the record it replays to, whatever the tap sent
    return stored.log, {**stored.options, "id": full}, f"the log of {full}"


@click.command("replay")
@click.argument("log", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--navigation", "nav_id", metavar="ID",
              help="Replay the log the log tap stored for this navigation (ID or a prefix).")
@db_option
@output_options
def replay_cmd(log: Path | None, nav_id: str | None, db: Path | None, fmt: str) -> None:
    """Replay a DevTools log through the recorder core and print the record(s) it makes.

    LOG: one event per line (as tests/fixtures/cdp/*.jsonl), or a JSON array of events (as
    Lighthouse's *.devtoolslog.json); gzipped or not. --navigation ID: the log stored beside
    that navigation's record, replayed with the recorder's options of that session.

    Example: protolens replay site.devtoolslog.json.gz --json
    """
    if (log is None) == (nav_id is None):
        raise UserError("name a LOG file or --navigation ID (one of them)")
    if nav_id is not None:
        data, options, where = _stored(nav_id, db)
    else:
        assert log is not None
        data, options, where = _read(log), None, str(log)
    try:
        records = replay(data, options, os.environ)
    except LogRejected as exc:
        raise UserError(f"{where}: {exc}") from None
    except ReplayError as exc:
        raise UserError(str(exc)) from None
    if fmt == "json":
        emit([raw for raw, _ in records], fmt)  # type: ignore[arg-type]
        return
    if fmt == "csv":
        rows: list[dict[str, Any]] = [{"record_id": raw["id"], **q} for raw, _ in records
                                      for q in raw["requests"]]
        emit(rows, fmt, columns=CSV_COLUMNS)
        return
    if not records:
        click.echo(f"{where}: the recorder made no record of this log")
        return
    for i, (_, record) in enumerate(records, 1):
        if len(records) > 1:
            click.echo(f"Record {i} of {len(records)}")
        print_view(show_view(record))
