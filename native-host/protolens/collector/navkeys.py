"""What the catalog keeps of each navigation of a bundle (pure): its id, stored once across the
whole dataset, and a fingerprint of its page and timings to the millisecond, by which a
contributor's near-duplicates (the same load sent twice under new ids) are flagged.

The page is the origin (a bundle keeps no more of the URL) with the source and warm flag; the
lab tags are left out. An anonymized origin is a pseudonym under a per-bundle salt
(``share/anonymize.py``), so across two bundles only origins kept in clear (``--allow-domains``)
can match; within one bundle every origin can.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa  # type: ignore[import-untyped]

from protolens.record.columns import VISUAL_MILESTONES
from protolens.store.collector_leases import NavKey

PAGE = ("source", "origin", "warm")
TIMINGS = ("ttfb_ms", "fcp_ms", "lcp_ms", "dcl_ms", "load_ms", "first_image_ms",
           *VISUAL_MILESTONES)


def _ms(value: object) -> object:
    return round(value) if isinstance(value, float) else value


def nav_keys(navigations: pa.Table) -> list[NavKey]:
    cols = [c for c in (*PAGE, *TIMINGS) if c in navigations.column_names]
    ids = navigations.column("id").to_pylist()
    values = navigations.select(cols).to_pylist()
    out = []
    for nav_id, row in zip(ids, values, strict=True):
        text = json.dumps([_ms(row[c]) for c in cols], separators=(",", ":"))
        out.append(NavKey(str(nav_id), hashlib.sha256(text.encode()).hexdigest()[:32]))
    return out
