"""``protolens contribute``: send what is new since the last accepted upload to a collector, as
one anonymized bundle, and print the collector's receipt (the work is in
``collector/contribute.py``, shared with the host's schedule)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from protolens.cli.allowlist import read_allowlist
from protolens.cli.db import db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.collector.contribute import ContributeError, Target, forget, run_once, status
from protolens.paths import data_home
from protolens.store import DatabaseError, StoreError


@click.command("contribute")
@click.option("--to", "url", help="The collector's URL, e.g. https://collector.example:8443.")
@click.option("--token", envvar="PROTOLENS_TOKEN", help="Your contributor token (or "
              "$PROTOLENS_TOKEN, which keeps it out of the process list).")
@click.option("--dry-run", is_flag=True, help="Show what would be sent; send and write nothing.")
@click.option("--forget", "forget_", is_flag=True,
              help="Stop: forget past uploads and any pending bundle.")
@click.option("--ca-cert", envvar="PROTOLENS_CA_CERT",
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Trust only this CA for the collector (or $PROTOLENS_CA_CERT).")
@click.option("--allow-domains", "allow_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Registrable domains whose origins may stay in clear (as for export).")
@db_option
@output_options
def contribute_cmd(url: str | None, token: str | None, dry_run: bool, forget_: bool,
                   ca_cert: Path | None, allow_file: Path | None, db: Path | None,
                   fmt: str) -> None:
    """Upload your anonymized page loads that are new since the last accepted upload.

    Example: protolens contribute --to https://collector.example:8443 --token plc_... --dry-run
    """
    home = data_home(os.environ)
    path = db_path(db)
    try:
        if forget_:
            emit(forget(path, home), fmt, title="forgotten")
            return
        if not url or (not token and not dry_run):
            raise UserError("give --to URL and --token TOKEN (or --forget)")
        if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
            raise UserError(f"--to: {url!r} is not an https:// URL")
        if not path.is_file():
            raise UserError(f"{path}: no database here (nothing recorded yet?)")
        if dry_run:
            s = status(path, url)
            emit({"status": "dry run: nothing sent", "navigations": s["new_loads"],
                  "columns": s["columns"], "last": s["last"]}, fmt, title=url)
            return
        allow = read_allowlist(allow_file)
        result = run_once(path, home, Target(url, token or "", ca_cert, allow))
    except ContributeError as exc:
        raise UserError(str(exc)) from None
    except (StoreError, DatabaseError) as exc:
        raise UserError(f"{path}: {exc}") from None
    emit(result, fmt, title="contributed" if "checksum" in result else url)
