"""``protolens collector``: run the collector and manage its tokens, catalog and dataset
(docs/COLLECTOR.md)."""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.collector import dataset
from protolens.collector.layout import CATALOG
from protolens.collector.tags import tag_key
from protolens.collector.tokens import make_token, token_hash, valid_name
from protolens.store import Connection, StoreError
from protolens.store import collector as catalog

data_option = click.option("--data", "data", required=True,
                           type=click.Path(file_okay=False, path_type=Path),
                           help="The collector's data directory (catalog and dataset).")


@contextmanager
def _catalog(data: Path, write: bool) -> Iterator[Connection]:
    try:
        conn = (catalog.open_catalog(data / CATALOG, time.time() * 1000) if write
                else catalog.open_catalog_ro(data / CATALOG))
    except StoreError as exc:
        raise UserError(str(exc)) from None
    with closing(conn):
        yield conn


@click.group("collector")
def collector_group() -> None:
    """Run a collector that volunteers' ``protolens contribute`` uploads to.

    Example: protolens collector serve --data /srv/protolens --listen 127.0.0.1:8443
    """


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise UserError(f"--listen: expected HOST:PORT (got {text!r})")
    return host.strip("[]"), int(port)


@collector_group.command("serve")
@data_option
@click.option("--listen", default="127.0.0.1:8443", show_default=True,
              help="Address and port to bind (loopback unless you say otherwise).")
@click.option("--tls-cert", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Certificate chain (PEM) for HTTPS.")
@click.option("--tls-key", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Private key (PEM) for HTTPS.")
@click.option("--max-bytes", type=click.IntRange(1024), default=8 << 20, show_default=True,
              help="Largest upload, bytes.")
@click.option("--max-uncompressed", type=click.IntRange(1024), default=64 << 20,
              show_default=True, help="Largest size a bundle may declare or decode to, bytes.")
@click.option("--rate", type=click.FloatRange(0), default=60.0, show_default=True,
              help="Uploads per minute per token (burst: --burst).")
@click.option("--burst", type=click.IntRange(1), default=30, show_default=True,
              help="Uploads a token may send at once before --rate applies.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes (each its own writer; any number of serve processes may "
                   "share --data).")
@click.option("--max-uploads", type=click.IntRange(1), default=8, show_default=True,
              help="Uploads one process receives at once; 503 with Retry-After past it.")
@click.option("--max-connections", type=click.IntRange(16), default=1000, show_default=True,
              help="Open connections per process; past it the oldest idle one is closed.")
@click.option("--header-timeout", type=click.FloatRange(0.1), default=10.0, show_default=True,
              help="Seconds a request's header may take.")
@click.option("--body-timeout", type=click.FloatRange(0.1), default=10.0, show_default=True,
              help="Seconds an upload's body may pause (408 past it).")
@click.option("--lease", "lease_s", type=click.FloatRange(1), default=30.0, show_default=True,
              help="Seconds a process's writer lease lasts without renewal.")
def serve_cmd(data: Path, listen: str, tls_cert: Path | None, tls_key: Path | None,
              max_bytes: int, max_uncompressed: int, rate: float, burst: int, workers: int,
              max_uploads: int, max_connections: int, header_timeout: float,
              body_timeout: float, lease_s: float) -> None:
    """Accept bundle uploads over HTTPS (HTTP without --tls-cert/--tls-key: loopback tests only).

    Example: protolens collector serve --data DIR --tls-cert c.pem --tls-key k.pem
    """
    from protolens.collector.connguard import ConnLimits
    from protolens.collector.limits import Limits
    from protolens.collector.serve import run
    from protolens.collector.settings_serve import Settings

    if (tls_cert is None) != (tls_key is None):
        raise UserError("give both --tls-cert and --tls-key, or neither")
    host, port = _listen(listen)
    if tls_cert is None and host not in ("127.0.0.1", "::1", "localhost"):
        raise UserError(f"--listen {listen}: plain HTTP only on loopback; give --tls-cert and "
                        "--tls-key to listen elsewhere")
    settings = Settings(data, Limits(max_bytes=max_bytes, max_uncompressed=max_uncompressed),
                        per_minute=rate, burst=burst, max_uploads=max_uploads, lease_s=lease_s,
                        body_timeout_s=body_timeout,
                        connections=ConnLimits(max_connections, header_timeout))
    try:
        run(settings, host, port, tls_cert, tls_key, workers)
    except StoreError as exc:
        raise UserError(str(exc)) from None


@collector_group.group("token")
def token_group() -> None:
    """Issue and revoke contributor tokens (stored hashed).

    Example: protolens collector token add vol-001 --data DIR
    """


@token_group.command("add")
@click.argument("name")
@data_option
def token_add(name: str, data: Path) -> None:
    """Issue a token for contributor NAME (a pseudonym); it is printed once, never stored.

    Example: protolens collector token add vol-001 --data DIR
    """
    if not valid_name(name):
        raise UserError(f"{name!r}: use letters, digits, '.', '_', '-' (at most 64)")
    token = make_token(secrets.token_bytes(32))
    with _catalog(data, write=True) as conn:
        if not catalog.add_token(conn, name, token_hash(token), time.time() * 1000,
                                 tag_key(token).hex()):
            raise UserError(f"{name}: a token with this name exists (revoke it or pick another)")
    click.echo(token)
    click.echo(f"token for {name}: give it to the contributor; it is not shown again",
               err=True)


@token_group.command("revoke")
@click.argument("name")
@data_option
def token_revoke(name: str, data: Path) -> None:
    """Revoke NAME's token: its uploads are refused from now on (403).

    Example: protolens collector token revoke vol-001 --data DIR
    """
    with _catalog(data, write=True) as conn:
        if not catalog.revoke_token(conn, name, time.time() * 1000):
            raise UserError(f"{name}: no active token with this name")
    click.echo(f"revoked {name}")


@token_group.command("list")
@data_option
@output_options
def token_list(data: Path, fmt: str) -> None:
    """Token names, when issued and revoked (never the tokens).

    Example: protolens collector token list --data DIR --json
    """
    with _catalog(data, write=False) as conn:
        emit(catalog.token_names(conn), fmt, title="tokens")


@collector_group.command("status")
@data_option
@output_options
def status_cmd(data: Path, fmt: str) -> None:
    """Bundles, rows, contributors and disk use.

    Example: protolens collector status --data DIR --json
    """
    with _catalog(data, write=False) as conn:
        out = catalog.summary(conn)
    out["disk_bytes"] = dataset.disk_bytes(data)
    emit(out, fmt, title=f"collector {data}")


@collector_group.command("verify")
@data_option
@output_options
def verify_cmd(data: Path, fmt: str) -> None:
    """Re-check every dataset file against the catalog (SHA-256, rows; nothing missing or
    extra), every bundle tag, and that no navigation is stored twice; list the uploads refused
    as duplicates and the near-duplicates flagged. Exit code 1 if anything is wrong.

    Example: protolens collector verify --data DIR
    """
    from protolens.collector.verify import verify
    from protolens.store import collector_leases as leases

    listed = dataset.dataset_files(data)  # before the catalog is read (verify.py says why)
    with _catalog(data, write=False) as conn:
        bundles = catalog.all_bundles(conn)
        keys = catalog.tag_keys(conn)
        migrated = catalog.has_table(conn, "refusals")
        refused = leases.refusals(conn) if migrated else []
        flagged = leases.flags(conn) if migrated else []
    problems, untagged = verify(data, bundles, keys, listed)
    files = sum(len(b.files) for b in bundles)
    if fmt == "json":
        emit({"bundles": len(bundles), "files": files, "untagged_bundles": untagged,
              "problems": problems, "refused_duplicates": refused, "near_duplicates": flagged},
             fmt)
    else:
        for p in problems:
            click.echo(p)
        for r in refused:
            click.echo(f"refused: bundle {r['checksum']} from {r['contributor']}: {r['ids']} "
                       f"navigations stored already by {r['other_contributor']} (first "
                       f"{r['first_id']})")
        for f in flagged:
            click.echo(f"near-duplicate: navigation {f['navigation_id']} of {f['contributor']} "
                       f"repeats {f['of_id']} (same page and timings)")
        click.echo(f"{len(bundles)} bundles, {files} files: "
                   + ("ok" if not problems else f"{len(problems)} problems")
                   + (f"; {untagged} bundles without a tag" if untagged else ""))
    if problems:
        sys.exit(1)


@collector_group.command("delete")
@click.option("--contributor", required=True, help="The token name whose bundles to delete.")
@data_option
def delete_cmd(contributor: str, data: Path) -> None:
    """Delete every bundle of a contributor (on their request): catalog rows, then files.

    Example: protolens collector delete --contributor vol-001 --data DIR
    """
    with _catalog(data, write=True) as conn:
        bundles = catalog.all_bundles(conn, contributor)
        if not bundles and contributor not in {t["name"] for t in catalog.token_names(conn)}:
            raise UserError(f"{contributor}: no such contributor")
        catalog.delete_bundles(conn, [b.checksum for b in bundles])
    files = dataset.remove_files(data, bundles)
    click.echo(f"deleted {len(bundles)} bundles ({files} files) of {contributor}")


@collector_group.command("publish")
@data_option
@click.option("--min-contributors", "k", type=click.IntRange(1), required=True,
              help="Leave out every cell with fewer distinct contributors than this.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The table to write: .csv or .parquet.")
@output_options
def publish_cmd(data: Path, k: int, out: Path, fmt: str) -> None:
    """Write the shareable table: per registrable domain, arm and network type, n, contributors,
    median PLT and its 95% interval (none, and a note, where the cell cannot give one); only
    cells with at least K contributors.

    Example: protolens collector publish --data DIR --min-contributors 5 --out open.csv
    """
    from protolens.collector import publish
    from protolens.store import dataset as ds

    if out.suffix.lower() not in (".csv", ".parquet"):
        raise UserError(f"--out: use a .csv or .parquet file name (got {out.name!r})")
    try:
        domains = publish.domain_map(ds.published_origins(data))
        rows = publish.judged(ds.publish_cells(data, domains, k))
    except (ds.DatasetError, publish.PublishError) as exc:
        raise UserError(str(exc)) from None
    try:
        publish.write(rows, out)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    emit({"out": str(out), "cells": len(rows), "min_contributors": k,
          "domains": len({r["domain"] for r in rows})}, fmt, title="published")
