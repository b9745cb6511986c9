"""Framing: the streaming decoder of 4-byte little-endian length + payload frames."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protolens.messaging.framing import (
    MAX_OUTGOING,
    Frame,
    FrameDecoder,
    FrameError,
    FrameTooLarge,
    encode_frame,
)


def feed_in_pieces(decoder: FrameDecoder, data: bytes, cuts: list[int]) -> list[object]:
    events: list[object] = []
    last = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts) + [len(data)]:
        events += decoder.feed(data[last:cut])
        last = max(last, cut)
    return events


def test_encode_prefix_is_little_endian_length() -> None:
    assert encode_frame(b'{"a":1}') == b"\x07\x00\x00\x00" + b'{"a":1}'


def test_encode_refuses_over_one_megabyte() -> None:
    encode_frame(b"x" * MAX_OUTGOING)
    with pytest.raises(FrameTooLarge, match="exceeds"):
        encode_frame(b"x" * (MAX_OUTGOING + 1))


def test_frames_split_at_every_byte_boundary() -> None:
    data = encode_frame(b'{"type":"ping"}') + encode_frame(b"[1,2]")
    decoder = FrameDecoder()
    events = [e for b in data for e in decoder.feed(bytes([b]))]
    assert events == [Frame(b'{"type":"ping"}'), Frame(b"[1,2]")]
    assert decoder.idle


def test_zero_length_is_an_error_and_stream_continues() -> None:
    decoder = FrameDecoder()
    events = decoder.feed(b"\x00\x00\x00\x00" + encode_frame(b"{}"))
    assert isinstance(events[0], FrameError) and "length 0" in events[0].error
    assert events[1] == Frame(b"{}")


def test_oversize_frame_is_skipped_without_buffering() -> None:
    decoder = FrameDecoder(limit=100)
    header = struct.pack("<I", 5000)
    events = decoder.feed(header)
    assert len(events) == 1 and isinstance(events[0], FrameError)
    assert "5000" in events[0].error and "limit" in events[0].error
    for _ in range(49):
        assert decoder.feed(b"z" * 100) == []
        assert len(decoder._buf) == 0  # discarded, not buffered
    assert not decoder.idle
    assert decoder.feed(b"z" * 100 + encode_frame(b"{}")) == [Frame(b"{}")]
    assert decoder.idle


def test_default_limit_is_64_mib() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(struct.pack("<I", 64 * 1024 * 1024))[0:0] == []
    assert not decoder.idle  # accepted as a frame being read, not an error
    over = FrameDecoder().feed(struct.pack("<I", 64 * 1024 * 1024 + 1))
    assert isinstance(over[0], FrameError)


def test_partial_header_is_not_idle() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\x05\x00") == []
    assert not decoder.idle


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=8),
       st.lists(st.integers(min_value=0, max_value=10_000), max_size=6))
def test_decode_of_encode_is_identity(payloads: list[bytes], cuts: list[int]) -> None:
    data = b"".join(encode_frame(p) for p in payloads)
    decoder = FrameDecoder()
    assert feed_in_pieces(decoder, data, cuts) == [Frame(p) for p in payloads]
    assert decoder.idle


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0, max_value=5000), max_size=5))
def test_garbage_only_yields_documented_events(data: bytes, cuts: list[int]) -> None:
    decoder = FrameDecoder(limit=1000)
    for event in feed_in_pieces(decoder, data, cuts):
        assert isinstance(event, Frame | FrameError)
        if isinstance(event, Frame):
            assert 0 < len(event.payload) <= 1000
        else:
            assert event.error.startswith("frame: ") and "\n" not in event.error
