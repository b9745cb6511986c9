"""``protolens export --har ID|--campaign NAME [-o FILE]``: page loads as a HAR 1.2 file.

The adapter around ``share/har.py``: loads records from the store, writes JSON to a file (never
over an existing one) or to stdout. docs/HAR.md documents the fields.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import click

from protolens import __version__
from protolens.cli.db import connect_ro, store_failure
from protolens.cli.errors import UserError
from protolens.share.har import to_har
from protolens.store.queries import NotFound, resolve_id
from protolens.store.records import campaign_navigation_ids, load_record


def export_har(nav_id: str | None, campaign: str | None, out: Path | None,
               db: Path | None) -> None:
    """Write the HAR of one navigation (id or unique prefix) or of a whole campaign."""
    if bool(nav_id) == bool(campaign):
        raise UserError("--har: give a navigation ID (--har ID) or a campaign "
                        "(--har --campaign NAME), not both")
    if out is not None and out.exists():
        raise UserError(f"{out}: already exists (choose another name)")
    conn = connect_ro(db)
    try:
        if campaign:
            ids = campaign_navigation_ids(conn, campaign)
            if not ids:
                raise UserError(f"no page loads in campaign {campaign!r} "
                                "(see: protolens lab campaigns)")
        else:
            assert nav_id is not None
            ids = [resolve_id(conn, nav_id)]
        har = to_har((load_record(conn, i) for i in ids), __version__)
    except NotFound as exc:
        raise UserError(str(exc)) from None
    except sqlite3.Error as exc:
        raise store_failure(db, exc) from None
    text = json.dumps(har, indent=1, ensure_ascii=False) + "\n"
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        with out.open("x", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    click.echo(f"{out}: {len(har['log']['pages'])} page(s), {len(har['log']['entries'])} "
               "entries (HAR 1.2)", err=True)
