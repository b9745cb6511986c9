"""``protolens merge``: import shared bundles into a research store, with provenance."""

from __future__ import annotations

import time
from pathlib import Path

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.share.bundle import BundleError
from protolens.share.merge import merge
from protolens.store import StoreError, open_rw


@click.command("merge")
@click.argument("bundles", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@click.option("--into", "into", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The research store (created if missing).")
@output_options
def merge_cmd(bundles: tuple[Path, ...], into: Path, fmt: str) -> None:
    """Validate bundles (checksums, schema version, value ranges) and import each in one
    transaction; a bundle imported before is skipped. Any invalid bundle: nothing is imported.

    Example: protolens merge alice.tar bob.tar --into research.db
    """
    missing = [str(b) for b in bundles if not b.exists()]
    if missing:
        raise UserError(f"{missing[0]}: no such bundle")
    try:
        conn = open_rw(into)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        results = merge(conn, list(bundles), time.time() * 1000)
    except BundleError as exc:
        raise UserError(f"{exc}; nothing imported") from None
    finally:
        conn.close()
    emit([r.__dict__ for r in results], fmt, title=f"merged into {into}",
         columns=("bundle", "status", "navigations", "skipped", "contributor_id")
         if fmt == "table" else None)
