"""A bundle's value checks (``share/bundle_values.py``) on what a crafted file can hold beyond what
``export`` writes: number columns stored dictionary-encoded (a Parquet file's Arrow schema may
say so, and ``pq.read_table`` then keeps them so) are checked as their numbers; and the split
the checks rely on, numbers for flags and ranges, text for allowed values and length."""

from __future__ import annotations

import pyarrow as pa
import pytest

from protolens.record import columns
from protolens.share.bundle_rules import TABLES
from protolens.share.bundle_values import check_column


def _column(table: str, name: str) -> columns.Column:
    return next(c for c in columns.bundled(table) if c.name == name)


@pytest.mark.parametrize(("name", "values", "problem"), [
    ("connections", [3, -1, 3], "negative value -1"),
    ("connections", [3, 2, 3], None),
])
def test_a_dictionary_encoded_number_column_is_checked_as_numbers(
        name: str, values: list[int], problem: str | None) -> None:
    encoded = pa.array(values, pa.int64()).dictionary_encode()
    table = pa.table({name: pa.chunked_array([encoded])})
    assert pa.types.is_dictionary(table.column(name).type)
    assert check_column(table, _column("hosts", name)) == problem


def test_a_dictionary_encoded_flag_and_real_column_are_checked_too() -> None:
    flag = _column("requests", "from_disk_cache")
    real = _column("requests", "end_ms")
    table = pa.table({"from_disk_cache": pa.array([0, 2]).dictionary_encode(),
                      "end_ms": pa.array([1.0, float("inf")]).dictionary_encode()})
    assert check_column(table, flag) == "values other than 0 and 1"
    assert check_column(table, real) == "values that are not finite numbers"


def test_only_number_columns_have_flags_or_ranges_and_only_text_has_allowed_values() -> None:
    for t in TABLES:
        for c in columns.bundled(t):
            if c.sql == "TEXT":
                assert not c.flag and c.min is None and c.max is None, (t, c.name)
            else:
                assert not c.enum, (t, c.name)
