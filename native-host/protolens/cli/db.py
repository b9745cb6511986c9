"""``protolens db``: store statistics and schema migrations; also the shared ``--db`` option."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.paths import default_db
from protolens.store import Connection, DatabaseError, StoreError, open_ro, open_rw
from protolens.store.forget import ForgetError, forget, normalize_site
from protolens.store.health import corrupt_hint, is_corruption, quick_check
from protolens.store.migrate import migration_states
from protolens.store.queries import stats

F = TypeVar("F", bound=Callable[..., Any])


def db_option(func: F) -> F:
    """``--db PATH`` (default ``$PROTOLENS_DB`` or ``$XDG_DATA_HOME/protolens/protolens.db``)."""
    return click.option(
        "--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="SQLite store (default: $PROTOLENS_DB, else $XDG_DATA_HOME/protolens/protolens.db).",
    )(func)


def db_path(db: Path | None) -> Path:
    """The store's absolute path: the lab's native host runs in Chromium's profile folder, so a
    relative ``--db`` (or ``$PROTOLENS_DB``) must not reach it as given."""
    return (db if db is not None else default_db(os.environ)).absolute()


def connect_ro(db: Path | None) -> Connection:
    """Open the store read-only for a command; a missing or broken file is a one-line error."""
    try:
        return open_ro(db_path(db))
    except StoreError as exc:
        if is_corruption(exc):
            raise store_failure(db, exc) from None
        raise UserError(str(exc)) from None


def store_failure(db: Path | None, exc: Exception) -> UserError:
    """The one-line error for a file that is not (yet) a usable ProtoLens store: a damaged one
    (SQLite's quick_check finds problems) points to the backup, never to ``db migrate``, which
    cannot mend a page."""
    path = db_path(db)
    problems = quick_check(path) if path.is_file() else []
    if problems or is_corruption(exc):
        what = "; ".join(problems) or str(exc)
        return UserError(f"{path}: the store is corrupt ({what}); {corrupt_hint(path)}")
    return UserError(f"{path}: not a ProtoLens store or an older schema ({exc}); "
                     "try: protolens db migrate")


@click.group("db")
def db_group() -> None:
    """Inspect and upgrade the SQLite store.

    Example: protolens db stats --json
    """


@db_group.command("stats")
@db_option
@output_options
def stats_cmd(db: Path | None, fmt: str) -> None:
    """Row counts, time span, sources and size of the store (read-only).

    Example: protolens db stats --db ~/lab.db
    """
    conn = connect_ro(db)
    try:
        emit(stats(conn, db_path(db)), fmt, title="ProtoLens store")
    except DatabaseError as exc:
        raise store_failure(db, exc) from None


@db_group.command("migrate")
@db_option
@click.option("--list", "list_only", is_flag=True,
              help="Only list migrations and whether each is applied (read-only).")
@output_options
def migrate_cmd(db: Path | None, list_only: bool, fmt: str) -> None:
    """Create the store or apply pending schema migrations.

    Example: protolens db migrate --list
    """
    path = db_path(db)
    if list_only:
        conn = connect_ro(db)
    else:
        try:
            conn = open_rw(path, time.time() * 1000, migrate=False)
            before = {s.name for s in migration_states(conn) if s.applied_at_ms is not None}
            conn.close()
            conn = open_rw(path, time.time() * 1000)
        except StoreError as exc:
            raise UserError(str(exc)) from None
    rows = [{"name": s.name, "applied": s.applied_at_ms is not None,
             "applied_at_ms": s.applied_at_ms} for s in migration_states(conn)]
    if not list_only:
        for row in rows:
            row["applied_now"] = row["name"] not in before
    emit(rows, fmt, title=f"migrations in {path}")


@db_group.command("forget")
@db_option
@click.option("--site", "site", metavar="DOMAIN", default=None,
              help="Delete the loads of pages on DOMAIN and its subdomains.")
@click.option("--all", "everything", is_flag=True, help="Delete every recorded load.")
@click.option("--yes", is_flag=True, help="Do not ask before --all.")
@output_options
def forget_cmd(db: Path | None, site: str | None, everything: bool, yes: bool, fmt: str) -> None:
    """Delete recorded page loads and every row that belongs to them; prints the rows deleted
    per table. Lab campaigns' own tables (campaigns, loads, flows) are kept.

    Example: protolens db forget --site example.com
    """
    if (site is None) == (not everything):
        raise UserError("say what to forget: --site DOMAIN or --all (not both)")
    try:
        target = None if everything else normalize_site(site or "")
    except ForgetError as exc:
        raise UserError(str(exc)) from None
    path = db_path(db)
    if not path.is_file():
        raise UserError(f"{path}: no database here (nothing recorded yet? use --db to choose one)")
    if everything and not yes:
        click.confirm(f"Delete every recorded load in {path}?", abort=True, err=True)
    try:
        conn = open_rw(path, time.time() * 1000, migrate=False)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        deleted = forget(conn, target)
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    finally:
        conn.close()
    emit([{"table": d.table, "deleted": d.rows} for d in deleted], fmt,
         title=f"deleted from {path}" + ("" if target is None else f" (site {target})"))
