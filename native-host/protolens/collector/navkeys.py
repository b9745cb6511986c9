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

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from protolens.record.columns import VISUAL_MILESTONES
from protolens.share.bundle import plain
from protolens.store.collector_leases import NavKey

PAGE = ("source", "origin", "warm")
TIMINGS = ("ttfb_ms", "fcp_ms", "lcp_ms", "dcl_ms", "load_ms", "first_image_ms",
           *VISUAL_MILESTONES)


def _text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column as text, numbers to the millisecond, nulls as ``-``."""
    if pa.types.is_floating(column.type):
        column = pc.cast(pc.round(column), pa.int64())
    return pc.fill_null(pc.cast(column, pa.string()), "-")


def nav_keys(navigations: pa.Table, contributor: str) -> list[NavKey]:
    """Computed column-wise (pyarrow), so a bundle of many navigations costs a few bytes of text
    per navigation, not a Python object per cell; ``contributor``: the token's name."""
    cols = [_text(navigations.column(c)) for c in (*PAGE, *TIMINGS)
            if c in navigations.column_names]
    joined = pc.binary_join_element_wise(*cols, "|")
    ids = plain(navigations.column("id")).to_pylist()  # dictionary-encoded from the collector
    return [NavKey.of(str(i), hashlib.sha256(t.encode()).hexdigest()[:32], contributor)
            for i, t in zip(ids, joined.to_pylist(), strict=True)]
