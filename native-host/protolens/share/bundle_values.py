"""The value checks of a bundle's Arrow tables (``bundle.read_bundle`` runs them on every table
it reads): each column against its ranges from ``record/columns.py``, connection shares,
anonymized hosts and URLs, and navigation ids. ``share/bundle_lite.py`` makes the same checks,
with the same lines, without pyarrow. pyarrow is imported where it is needed (an extra, as in
``bundle.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protolens.record import columns
from protolens.share.bundle_rules import HOST_COLUMNS, BundleError, ip_literal, out_of_range


def plain(column: Any) -> Any:
    """A column with dictionary encoding decoded to its value type (as ``pq.read_table``
    gives it); any other column as it is."""
    import pyarrow as pa  # type: ignore[import-untyped]

    return column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column


def _distinct(values: Any) -> Any:
    """The values of a null-free column to check a set property on (all in a set, the longest,
    the smallest and largest): a dictionary-encoded column's referenced dictionary values, which
    kernels such as ``utf8_length`` and ``min_max`` take; any other column as it is."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    if not pa.types.is_dictionary(values.type):
        return values
    return pa.chunked_array([c.dictionary.take(pc.unique(c.indices)) for c in values.chunks],
                            type=values.type.value_type)


def check_column(table: Any, c: columns.Column) -> str | None:
    """What is wrong with column ``c`` of ``table`` against its ranges, or None: a number
    column's flags, finiteness and range (``_check_numbers``), a text column's allowed values
    and length."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    data = table.column(c.name)
    if c.required and data.null_count:
        return "missing values"
    if c.sql != "TEXT":
        return _check_numbers(c, data)
    values = data.drop_null()
    if not len(values):
        return None
    values = _distinct(values)
    if c.enum and not pc.all(pc.is_in(values, pa.array(list(c.enum)))).as_py():
        return f"values other than {', '.join(c.enum)}"
    if c.max_len is not None:
        longest = pc.max(pc.utf8_length(values)).as_py()
        if longest > c.max_len:
            return f"text of {longest} characters, at most {c.max_len} allowed"
    return None


def _check_numbers(c: columns.Column, data: Any) -> str | None:
    """``check_column`` of a number column, on its values as one NumPy array (``to_numpy``
    decodes one a crafted file stored dictionary-encoded): one NumPy pass per check instead of
    a pyarrow compute call, whose fixed cost (tens of microseconds) outweighed the work on these
    columns (about 55 per bundle): in process, a 1,000-navigation bundle's validation 16.2 ->
    13.5 ms, median of 4 pairs. A text column never has a flag or a range
    (tests/share/test_bundle_values.py)."""
    import numpy as np

    values = (data.drop_null() if data.null_count else data).to_numpy()
    if not len(values):
        return None
    if c.flag and not ((values == 0) | (values == 1)).all():
        return "values other than 0 and 1"
    if c.sql == "REAL" and not np.isfinite(values).all():
        return "values that are not finite numbers"
    if c.min is None and c.max is None:
        return None
    return out_of_range(c, values.min().item(), values.max().item())


def _check_shares(table: Any) -> str | None:
    """Connection shares sum to at most 1 per navigation and ``upstream`` value."""
    import pyarrow.compute as pc

    sums = table.group_by(["navigation_id", "upstream"], use_threads=False).aggregate(
        [("share", "sum")])
    top = pc.max(sums.column("share_sum")).as_py()
    if top is not None and top > 1 + columns.SHARE_EPSILON:
        return f"a navigation's shares sum to {top:.6g}, above 1"
    return None


def check_values(path: Path, name: str, table: Any, nav_ids: Any) -> None:
    import pyarrow.compute as pc

    def bad(column: str, what: str) -> BundleError:
        return BundleError(f"{path}: {name}.{column}: {what}")

    if table.num_rows == 0:  # pyarrow's all() of nothing is null, not true
        return
    for c in columns.bundled(name):
        problem = check_column(table, c)
        if problem:
            raise bad(c.name, problem)
    if name == "connections" and (problem := _check_shares(table)):
        raise bad("share", problem)
    for col in HOST_COLUMNS[name]:  # anonymized hosts are tokens or allowlisted names
        if any(ip_literal(v) for v in pc.unique(table.column(col).drop_null()).to_pylist()):
            raise bad(col, "an IP address (not an anonymized bundle)")
    if name == "navigations":
        ids = plain(table.column("id"))
        if pc.count_distinct(ids).as_py() != len(ids):
            raise bad("id", "duplicate ids")
        if not pc.all(pc.equal(table.column("url_detail"), "origin")).as_py() or \
                not pc.all(pc.equal(table.column("url"), table.column("origin"))).as_py():
            raise bad("url", "not reduced to the origin (not an anonymized bundle)")
    elif nav_ids is not None and \
            not pc.all(pc.is_in(table.column("navigation_id"), nav_ids)).as_py():
        raise bad("navigation_id", "refers to a navigation not in the bundle")
