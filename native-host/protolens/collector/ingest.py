"""One upload, from the file the request body was streamed to, to the catalog's commit
(adapter; runs in a worker thread).

The upload is checked against the limits from its Parquet metadata (``limits.check_members``),
then ``share/bundle.read_bundle`` validates the tables that check decoded exactly as ``merge``
does, then its tag is checked against the token's key (``tags.py``). Its tables are encoded
into the writer's folder (``stage_file``: the part that holds decoded tables); then, in
``commit_staged``, they are fsynced, the catalog commits them
(``store/collector_leases.commit_bundle``: lease, navigation ids stored once, the bundle), and
only then are the files moved into the dataset and the receipt returned.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.collector import dataset
from protolens.collector.layout import CATALOG, utc_day
from protolens.collector.limits import Limits, TooLarge, check_members
from protolens.collector.navkeys import nav_keys
from protolens.collector.tags import verifies
from protolens.collector.writer import Writer
from protolens.share.bundle import MANIFEST, BundleError, member_files, read_bundle
from protolens.store.collector import CatalogBundle, find_bundle, open_catalog
from protolens.store.collector_leases import Duplicate, LeaseLost, NavKey, commit_bundle


class Refusal(Exception):
    """An upload the collector refuses: HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Receipt:
    """What the collector answers for an accepted upload."""

    checksum: str
    status: str
    """``stored`` or ``already stored``."""
    contributor: str
    received_at: str
    """UTC, ISO 8601, to the second."""
    rows: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"checksum": self.checksum, "status": self.status,
                "contributor": self.contributor, "received_at": self.received_at,
                "rows": self.rows}


def _receipt(b: CatalogBundle, status: str) -> Receipt:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b.received_at_ms / 1000))
    return Receipt(b.checksum, status, b.contributor, when,
                   {f.table: f.rows for f in sorted(b.files, key=lambda f: f.table)})


@dataclass(frozen=True)
class Upload:
    """Who sent a streamed upload, and the tag it came with."""

    contributor: str
    tag: str | None = None
    key: str | None = None
    """The token's tag key (hex); None only for trusted in-process callers (tests)."""


def _validate(upload: Path, who: Upload, limits: Limits) -> tuple[Any, bytes]:
    try:
        files = member_files(upload)
        decoded = check_members(files, limits)
        bundle = read_bundle(upload, files, decoded)
    except TooLarge as exc:
        raise Refusal(413, str(exc)) from None
    except BundleError as exc:
        raise Refusal(422, str(exc).replace(str(upload), "bundle")) from None
    manifest = files[MANIFEST]
    if who.key is not None and not (who.tag and verifies(bytes.fromhex(who.key), manifest,
                                                          who.tag)):
        raise Refusal(401, "the bundle's tag does not verify under this token's key "
                           "(send ProtoLens-Bundle-Tag, made with the token you upload with)")
    return bundle, manifest


@dataclass(frozen=True)
class Staged:
    """An upload validated and encoded into the writer's folder, not yet durable nor
    committed: what ``commit_staged`` needs once the decoded tables are gone."""

    writer: str
    stage: Path
    entry: CatalogBundle
    bundle_schema: int
    protolens_version: str | None
    exported_at: str | None
    navs: list[NavKey]


def stage_file(upload: Path, who: Upload, now_ms: float, limits: Limits, writer: Writer
               ) -> Staged | Receipt:
    """Validate one streamed upload and encode its tables into the writer's folder (the work
    that holds decoded tables: the server runs it in a validation place); a ``Receipt`` if the
    same token stored it already. Raise ``Refusal`` if it is not acceptable."""
    size = upload.stat().st_size
    if size > limits.max_bytes:
        raise Refusal(413, f"bundle over the size limit ({limits.max_bytes} bytes)")
    bundle, manifest = _validate(upload, who, limits)
    found = find_bundle(writer.catalog(), bundle.checksum)
    if found is not None and found.contributor == who.contributor:
        return _receipt(found, "already stored")
    wid = writer.id  # once: a writer that loses its lease meanwhile takes a new id
    stage = writer.folder_of(wid)
    day = utc_day(now_ms)
    files = dataset.stage_bundle(stage, bundle, who.contributor, day, secrets.token_hex(4),
                                 sync=False)
    m = bundle.manifest
    entry = CatalogBundle(bundle.checksum, who.contributor, m["contributor_id"], now_ms,
                          day, size, files, manifest.decode(), who.tag)
    return Staged(wid, stage, entry, m["bundle_schema"], m.get("protolens_version"),
                  m.get("exported_at"), nav_keys(bundle.tables["navigations"], who.contributor))


def commit_staged(data: Path, staged: Staged, writer: Writer) -> Receipt:
    """Make the staged files durable, commit them in the catalog, move them into the dataset:
    the receipt is returned only after all three (acknowledged data is never lost). Nothing is
    moved if the commit refuses (``Refusal``)."""
    entry, stage = staged.entry, staged.stage
    kept: CatalogBundle | None = None
    try:
        dataset.sync_staged(stage, entry.files)
        kept = commit_bundle(writer.catalog(), staged.writer, entry, staged.bundle_schema,
                             staged.protolens_version, staged.exported_at, staged.navs,
                             writer.navs)
    except LeaseLost:
        raise Refusal(503, "the collector is restarting a worker; send it again") from None
    except Duplicate as exc:
        mine = exc.other_contributor == entry.contributor
        raise Refusal(409, f"{exc.ids} of its navigations are stored already"
                           f"{' (sent by you before)' if mine else ' (by another token)'}; "
                           "a navigation counts once") from None
    finally:
        if kept is not entry:
            dataset.unstage(stage, entry.files)
    if kept is not entry:
        return _receipt(kept, "already stored")
    dataset.publish(data, stage, entry.files)
    return _receipt(entry, "stored")


def accept_file(data: Path, upload: Path, who: Upload, now_ms: float, limits: Limits,
                writer: Writer) -> Receipt:
    """Validate and store one streamed upload (``stage_file`` then ``commit_staged``); raise
    ``Refusal`` and move nothing into the dataset if it is not acceptable."""
    staged = stage_file(upload, who, now_ms, limits, writer)
    if isinstance(staged, Receipt):
        return staged
    return commit_staged(data, staged, writer)


def accept(data: Path, body: bytes, contributor: str, now_ms: float, limits: Limits,
           migrate: bool = True) -> Receipt:
    """In-process ``accept_file`` of bytes (no tag checked) under a writer lease of its own."""
    conn = open_catalog(data / CATALOG, now_ms, migrate)
    conn.close()
    writer = Writer(data)
    writer.register()
    try:
        fd, name = tempfile.mkstemp(prefix="upload-", suffix=".tar", dir=writer.folder)
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        return accept_file(data, Path(name), Upload(contributor), now_ms, limits, writer)
    finally:
        writer.release()
