"""``protolens contribute``: send what is new since the last accepted upload to a collector, as
one anonymized bundle (``share/export.py``), and print the collector's receipt (issue 11).

The bundle is kept in ``<data home>/contribute/`` until the collector accepts it, so an
interrupted run resends the same bytes (same checksum: the collector stores it once) instead of
a new bundle with the same loads.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import click

from protolens.cli.db import db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.collector.client import UploadError, upload
from protolens.paths import data_home
from protolens.share import contributor, export
from protolens.share.anonymize import parse_allowlist
from protolens.share.bundle import SCHEMAS, TABLES, BundleError, read_bundle
from protolens.store import StoreError, open_rw
from protolens.store import contribute as state
from protolens.store.research import local_ingest_window

PENDING = "pending.tar"
PENDING_INFO = "pending.json"


def _pending_dir() -> Path:
    return data_home(os.environ) / "contribute"


def _forget() -> dict[str, Any]:
    removed = 0
    for name in (PENDING, PENDING_INFO):
        path = _pending_dir() / name
        if path.exists():
            path.unlink()
            removed += 1
    db = db_path(None)
    forgotten = 0
    if db.is_file():
        try:
            conn = open_rw(db)
        except StoreError as exc:
            raise UserError(str(exc)) from None
        try:
            forgotten = state.forget(conn)
        finally:
            conn.close()
    return {"forgotten_uploads": forgotten, "pending_removed": removed > 0}


def _send(conn: sqlite3.Connection, url: str, token: str, ca_cert: Path | None,
          tar: Path, info: dict[str, Any]) -> dict[str, Any]:
    try:
        receipt = upload(url, token, tar.read_bytes(), ca_cert=ca_cert, sleep=time.sleep)
    except UploadError as exc:
        raise UserError(f"{exc} (the bundle is kept and sent again next time)") from None
    state.record(conn, url, receipt["checksum"], info["upto_ms"], info["navigations"],
                 time.time() * 1000, json.dumps(receipt, sort_keys=True))
    tar.unlink()
    (tar.parent / PENDING_INFO).unlink(missing_ok=True)
    return receipt


@click.command("contribute")
@click.option("--to", "url", help="The collector's URL, e.g. https://collector.example:8443.")
@click.option("--token", envvar="PROTOLENS_TOKEN", help="Your contributor token (or "
              "$PROTOLENS_TOKEN, which keeps it out of the process list).")
@click.option("--dry-run", is_flag=True, help="Show what would be sent; send and write nothing.")
@click.option("--forget", is_flag=True, help="Stop: forget past uploads and any pending bundle.")
@click.option("--ca-cert", envvar="PROTOLENS_CA_CERT",
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Trust only this CA for the collector (or $PROTOLENS_CA_CERT).")
@click.option("--allow-domains", "allow_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Registrable domains whose origins may stay in clear (as for export).")
@db_option
@output_options
def contribute_cmd(url: str | None, token: str | None, dry_run: bool, forget: bool,
                   ca_cert: Path | None, allow_file: Path | None, db: Path | None,
                   fmt: str) -> None:
    """Upload your anonymized page loads that are new since the last accepted upload.

    Example: protolens contribute --to https://collector.example:8443 --token plc_... --dry-run
    """
    if forget:
        emit(_forget(), fmt, title="forgotten")
        return
    if not url or (not token and not dry_run):
        raise UserError("give --to URL and --token TOKEN (or --forget)")
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
        raise UserError(f"--to: {url!r} is not an https:// URL")
    allow: frozenset[str] = frozenset()
    if allow_file is not None:
        try:
            allow = parse_allowlist(allow_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{allow_file}: cannot read the allowlist ({exc})") from None
    path = db_path(db)
    if not path.is_file():
        raise UserError(f"{path}: no database here (nothing recorded yet?)")
    try:
        conn = open_rw(path)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        pending = _pending_dir() / PENDING
        if pending.exists() and not dry_run:
            try:
                info = json.loads((pending.parent / PENDING_INFO).read_text())
            except (OSError, ValueError):  # interrupted before its note was written: rebuild
                info = {}
                pending.unlink()
            if info.get("collector") == url and token:
                emit(_send(conn, url, token, ca_cert, pending, info), fmt,
                     title="resent the pending bundle")
                return
        after = state.high_water(conn, url)
        count, latest = local_ingest_window(conn, after)
        if count == 0 or latest is None:
            emit({"status": "nothing new", "last": state.last(conn)}, fmt, title=url)
            return
        if dry_run:
            emit({"status": "dry run: nothing sent", "navigations": count,
                  "columns": {t: [f.name for f in SCHEMAS[t]] for t in TABLES},
                  "last": state.last(conn)}, fmt, title=url)
            return
        now_ms = time.time() * 1000
        built = export.build(conn, allow=allow, since_ms=None, now_ms=now_ms,
                             contributor_id=contributor.ensure_id(data_home(os.environ)),
                             ingested=(after, latest))
        pending.parent.mkdir(parents=True, exist_ok=True)
        export.write(built, pending, now_ms)
        read_bundle(pending)  # what the collector will check, checked here first
        info = {"collector": url, "upto_ms": latest,
                "navigations": built.manifest["tables"]["navigations"]["rows"]}
        (pending.parent / PENDING_INFO).write_text(json.dumps(info))
        emit(_send(conn, url, token or "", ca_cert, pending, info), fmt, title="contributed")
    except BundleError as exc:
        raise UserError(f"the bundle built here does not validate ({exc})") from None
    except sqlite3.Error as exc:
        raise UserError(f"{path}: {exc}") from None
    finally:
        conn.close()
