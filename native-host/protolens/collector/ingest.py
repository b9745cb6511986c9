"""One upload, from the request body to the catalog row (adapter; runs in a worker thread).

The body is parked in ``DIR/tmp`` (never in the dataset), its Parquet footers are checked against
the limits (``limits.check_members``), then ``share/bundle.read_bundle`` validates it exactly as
``merge`` does. A bundle already in the catalog is not written again (idempotent re-upload).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.collector import dataset
from protolens.collector.layout import CATALOG, TMP, utc_day
from protolens.collector.limits import Limits, TooLarge, check_members
from protolens.share.bundle import BundleError, member_files, read_bundle
from protolens.store.collector import CatalogBundle, add_bundle, find_bundle, open_catalog


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


def accept(data: Path, body: bytes, contributor: str, now_ms: float, limits: Limits,
           migrate: bool = True) -> Receipt:
    """Validate and store one bundle; raise ``Refusal`` and write nothing to the dataset if it
    is not acceptable (``migrate=False``: the catalog is known to be current)."""
    if len(body) > limits.max_bytes:
        raise Refusal(413, f"bundle over the size limit ({limits.max_bytes} bytes)")
    (data / TMP).mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".upload-", suffix=".tar", dir=data / TMP)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        try:
            check_members(member_files(tmp), limits)
            bundle = read_bundle(tmp)
        except TooLarge as exc:
            raise Refusal(413, str(exc)) from None
        except BundleError as exc:
            raise Refusal(422, str(exc).replace(str(tmp), "bundle")) from None
        conn = open_catalog(data / CATALOG, now_ms, migrate)
        try:
            found = find_bundle(conn, bundle.checksum)
            if found is not None:
                return _receipt(found, "already stored")
            day = utc_day(now_ms)
            files = dataset.write_bundle(data, bundle, contributor, day)
            m = bundle.manifest
            entry = CatalogBundle(bundle.checksum, contributor, m["contributor_id"], now_ms, day,
                                  len(body), files)
            kept = add_bundle(conn, entry, m["bundle_schema"], m.get("protolens_version"),
                              m.get("exported_at"))
            return _receipt(kept, "stored" if kept is entry else "already stored")
        finally:
            conn.close()
    finally:
        tmp.unlink(missing_ok=True)
