"""``protolens merge``: import shared bundles into a research store, with provenance."""

from __future__ import annotations

import time
from pathlib import Path

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.share.bundle import BundleError
from protolens.share.merge import merge_bundles, read_all
from protolens.store import StoreError, open_rw


@click.command("merge")
@click.argument("bundles", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@click.option("--into", "into", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The research store (created if missing).")
@output_options
def merge_cmd(bundles: tuple[Path, ...], into: Path, fmt: str) -> None:
    """Validate bundles (checksums, schema version, value ranges) and import them all in one
    transaction; a bundle imported before is skipped. Any invalid bundle, or one the store
    refuses: nothing is imported, and a store this command would have created is not left
    behind.

    Example: protolens merge alice.tar bob.tar --into research.db
    """
    missing = [str(b) for b in bundles if not b.exists()]
    if missing:
        raise UserError(f"{missing[0]}: no such bundle")
    try:
        valid = read_all(list(bundles))  # before the store: a refused merge creates nothing
    except BundleError as exc:
        raise UserError(f"{exc}; nothing imported") from None
    created = not into.exists()
    try:
        conn = open_rw(into, time.time() * 1000)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        results = merge_bundles(conn, valid, time.time() * 1000)
    except BundleError as exc:
        conn.close()
        if created:  # nothing written when nothing is imported
            for path in (into, Path(f"{into}-wal"), Path(f"{into}-shm")):
                path.unlink(missing_ok=True)
        raise UserError(f"{exc}; nothing imported") from None
    conn.close()
    emit([r.__dict__ for r in results], fmt, title=f"merged into {into}",
         columns=("bundle", "status", "navigations", "skipped", "contributor_id")
         if fmt == "table" else None)
