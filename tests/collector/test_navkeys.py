"""The catalog's navigation keys (``collector/navkeys.py``) against their definition written
out row by row in plain Python: a fingerprint stored by one version must be found by the next
(near-duplicates are matched across bundles by it), so its text may never drift."""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa
import pytest

from protolens.collector.navkeys import PAGE, TIMINGS, nav_keys
from protolens.store.collector_navindex import key64


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return str(int(round(value)))  # Python rounds half to even, as the definition does
    return str(value)


def _expected(rows: list[dict[str, Any]], names: list[str], contributor: str
              ) -> list[tuple[str, str, int, int]]:
    out = []
    for row in rows:
        fp = hashlib.sha256("|".join(_text(row[c]) for c in names).encode()).hexdigest()[:32]
        out.append((row["id"], fp, key64(row["id"]), key64(contributor, fp)))
    return out


def _table(rows: list[dict[str, Any]], names: list[str], chunks: int) -> pa.Table:
    types = {"source": pa.string(), "origin": pa.string(), "warm": pa.int64()}
    schema = pa.schema([pa.field("id", pa.dictionary(pa.int32(), pa.string()))]
                       + [pa.field(c, types.get(c, pa.float64())) for c in names])
    step = -(-len(rows) // chunks)
    parts = [pa.Table.from_pylist(rows[i:i + step], schema=schema)
             for i in range(0, len(rows), step)]
    return pa.concat_tables(parts)


@pytest.mark.parametrize("chunks", [1, 3])
@pytest.mark.parametrize("all_columns", [True, False])
def test_keys_are_their_definition_row_by_row(chunks: int, all_columns: bool) -> None:
    # halves round to even (2.5 -> 2, 3.5 -> 4), -0.4 is "0", nulls are "-"; without the
    # visual milestones, as a bundle of an older schema reads
    names = [*PAGE, *TIMINGS] if all_columns else [*PAGE, *TIMINGS[:6]]
    values = [2.5, 3.5, -0.4, None, 1234.49, 1e6 + 0.5, 0.0, 7.51]
    rows = []
    for i in range(40):
        row: dict[str, Any] = {"id": f"nav-{i}", "source": ("lab", "everyday", None)[i % 3],
                               "origin": f"https://h{i % 4}.example", "warm": i % 2}
        for j, c in enumerate(names[len(PAGE):]):
            row[c] = values[(i + j) % len(values)]
        rows.append(row)
    table = _table(rows, names, chunks)
    assert table.column("ttfb_ms").num_chunks == chunks
    got = [tuple(k) for k in nav_keys(table, "vol-7")]
    assert got == _expected(rows, names, "vol-7")
    assert len({k[1] for k in got}) > 1  # the fingerprints do differ by row


def test_the_contributor_is_in_the_near_duplicate_key_only() -> None:
    rows = [{"id": "n1", "source": "lab", "origin": "o", "warm": 0,
             **{c: 10.0 for c in TIMINGS}}]
    a, b = (nav_keys(_table(rows, [*PAGE, *TIMINGS], 1), who)[0] for who in ("vol-1", "vol-2"))
    assert (a.id, a.fingerprint, a.id_key) == (b.id, b.fingerprint, b.id_key)
    assert a.fp_key != b.fp_key
