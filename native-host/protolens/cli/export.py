"""``protolens export``: an anonymized bundle (manifest + Parquet tables in one .tar) to share."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import click

from protolens.cli.allowlist import read_allowlist
from protolens.cli.db import connect_ro, db_option, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.paths import data_home
from protolens.share import contributor, export
from protolens.share.bundle import TABLES
from protolens.store import DatabaseError

SAMPLE = 3


def parse_since(text: str | None) -> float | None:
    """``2025-11-01`` or ``2025-11-01T08:00`` (UTC unless an offset is given) -> epoch ms."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(f"--since: not a date {text!r} (use YYYY-MM-DD or "
                        "YYYY-MM-DDTHH:MM)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp() * 1000


@click.command("export")
@click.option("--har", "har", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Write HAR 1.2 instead of a bundle: of navigation ID, or with --campaign.")
@click.option("--campaign", help="With --har: every page load of this lab campaign.")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="The bundle (a .tar) or HAR file to write; must not exist yet "
                   "(HAR: stdout without it).")
@click.option("--since", help="Only page loads from this date on (UTC), e.g. 2025-11-01.")
@click.option("--preview", is_flag=True,
              help="Print what would leave the machine and write nothing (--json: every row).")
@click.option("--allow-domains", "allow_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Registrable domains (one per line, or a rank,domain CSV such as a top-sites "
                   "list) whose origins may stay in clear.")
@click.option("--keep-campaign", "keep_campaigns", multiple=True, metavar="NAME",
              help="A campaign name to share in clear (repeatable); any other campaign name "
                   "is exported as an anon-<hex> token.")
@db_option
@output_options
def export_cmd(har: str | None, campaign: str | None, out: Path | None, since: str | None,
               preview: bool, allow_file: Path | None, keep_campaigns: tuple[str, ...],
               db: Path | None, fmt: str) -> None:
    """Write an anonymized bundle of your recorded data for sharing, or page loads as HAR.

    Bundle: hosts become salted hashes (the salt never leaves this machine), URLs origins
    without ports, times minutes; no IP addresses or ports, command lines or free-form context;
    lab tags in clear only when they are ProtoLens's own names. See docs/RESEARCH.md.
    HAR (--har): one page load, or a campaign's, for DevTools, WebPageTest or sitespeed.io; URLs
    as detailed as recorded. See docs/HAR.md.

    Example: protolens export --preview --allow-domains top-sites.csv

    Example: protolens export --har 3f2a9c1e -o load.har
    """
    if har is not None or campaign is not None:
        from protolens.cli.export_har import export_har

        if preview or since or allow_file or keep_campaigns:
            raise UserError("--har: --preview, --since, --allow-domains and --keep-campaign are "
                            "for bundles only")
        export_har(har or None, campaign, out, db)
        return
    if not preview and out is None:
        raise UserError("give --out FILE.tar (or --preview to see what would be exported)")
    if out is not None and not preview and out.exists():
        raise UserError(f"{out}: already exists (choose another name)")
    allow = read_allowlist(allow_file)
    since_ms = parse_since(since)
    home = data_home(os.environ)
    cid = contributor.read_id(home) if preview else contributor.ensure_id(home)
    now_ms = time.time() * 1000
    conn = connect_ro(db)
    try:
        built = export.build(conn, allow=allow, since_ms=since_ms, now_ms=now_ms,
                             contributor_id=cid or "0" * 32, keep_rows=preview,
                             keep_campaigns=frozenset(keep_campaigns))
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    if built.manifest["tables"]["navigations"]["rows"] == 0:
        raise UserError("nothing to export" + (f" since {since}" if since else "")
                        + " (only page loads recorded here are exported, not merged ones)")
    if preview:
        if cid is None:
            built.manifest["contributor_id"] = "(generated on the first real export)"
        _preview(built, fmt)
        return
    assert out is not None
    try:
        checksum = export.write(built, out, now_ms)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    emit({"bundle": str(out), "checksum": checksum, "contributor_id": cid,
          **{name: built.manifest["tables"][name]["rows"] for name in TABLES},
          "bytes": out.stat().st_size}, fmt, title="exported")


def _preview(built: export.Built, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({"manifest": built.manifest, "tables": built.rows}, indent=2))
        return
    click.echo("Nothing written. This is what the bundle would contain:\n")
    click.echo(json.dumps(built.manifest, indent=2))
    for name in TABLES:
        rows = built.rows[name]
        click.echo(f"\n{name}: {len(rows)} rows; the first {min(SAMPLE, len(rows))} "
                   "(--json prints every row):")
        if fmt == "csv":
            emit(rows[:SAMPLE], "csv")
            continue
        for i, row in enumerate(rows[:SAMPLE]):
            click.echo(f"  [{i}]")
            for key, value in row.items():
                click.echo(f"    {key} = {value!r}")
