"""Pure parts of the collector: token format and hash, bearer parsing, the rate limiter, the
partition layout, the decompression-bomb check, and the shared validator's IP check."""

from __future__ import annotations

import io
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from protolens.collector.layout import table_file, utc_day
from protolens.collector.limits import Limits, TooLarge, check_members
from protolens.collector.ratelimit import RateLimiter
from protolens.collector.tokens import bearer, is_token, make_token, token_hash, valid_name
from protolens.share.bundle import ip_literal as _ip_literal


def test_token_format_and_hash() -> None:
    t = make_token(bytes(range(32)))
    assert is_token(t) and t.startswith("plc_") and len(t) == 47
    assert token_hash(t) == token_hash(t) and len(token_hash(t)) == 64
    assert token_hash(t) != token_hash(make_token(bytes(32)))
    assert t not in token_hash(t)
    with pytest.raises(ValueError):
        make_token(b"short")


@pytest.mark.parametrize(("header", "want"), [
    ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic abc", None), ("Bearer", None),
    ("", None), (None, None)])
def test_bearer(header: str | None, want: str | None) -> None:
    assert bearer(header) == want


def test_names() -> None:
    assert valid_name("vol-001") and valid_name("a.b_c")
    assert not valid_name("") and not valid_name("-x") and not valid_name("a b")
    assert not valid_name("x" * 65)


def test_rate_limiter_burst_then_refill() -> None:
    rl = RateLimiter(per_minute=60, burst=3)
    assert [rl.take("k", 100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = rl.take("k", 100.0)
    assert wait == pytest.approx(1.0)
    assert rl.take("other", 100.0) == 0.0  # buckets are per key
    assert rl.take("k", 100.5) > 0
    assert rl.take("k", 101.1) == 0.0  # one second refills one upload
    zero = RateLimiter(0, 1)
    assert zero.take("z", 0.0) == 0.0 and math.isinf(zero.take("z", 10.0))


def test_layout() -> None:
    assert utc_day(1_763_950_000_000.0) == "2025-11-24"
    assert str(table_file("requests", "2025-11-24", "ab" * 32)) == \
        f"table=requests/day=2025-11-24/{'ab' * 32}.parquet"


def _parquet(n: int, width: int) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": pa.array(["a" * width] * n)}), buf, compression="zstd")
    return buf.getvalue()


def test_bomb_refused_before_decoding() -> None:
    bomb = _parquet(2000, 5000)  # 10 MB of 'a' in a few hundred bytes (dictionary + zstd)
    assert len(bomb) < 10_000
    with pytest.raises(TooLarge, match="decodes to more than"):
        check_members({"navigations.parquet": bomb}, Limits(max_uncompressed=4 << 20))
    check_members({"navigations.parquet": bomb}, Limits(max_uncompressed=64 << 20))
    buf = io.BytesIO()  # no dictionary: compression alone, caught from the footer
    pq.write_table(pa.table({"x": pa.array(["a" * 5000] * 2000)}), buf, compression="zstd",
                   use_dictionary=False)
    with pytest.raises(TooLarge, match="declares more than"):
        check_members({"navigations.parquet": buf.getvalue()}, Limits(max_uncompressed=4 << 20))
    with pytest.raises(TooLarge, match="rows"):
        check_members({"requests.parquet": _parquet(50, 1)}, Limits(max_rows=49))
    check_members({"requests.parquet": b"not parquet"}, Limits())  # left to read_bundle


@pytest.mark.parametrize(("value", "ip"), [
    ("203.0.113.7", True), ("https://10.0.0.1:8443", True), ("[2001:db8::1]:443", True),
    ("https://[2001:db8::1]", True), ("2001:db8::1", True), ("anon-0123456789abcdef", False),
    ("https://anon-0123456789abcdef:8443", False), ("https://wikipedia.org", False)])
def test_ip_literal(value: str, ip: bool) -> None:
    assert _ip_literal(value) is ip
