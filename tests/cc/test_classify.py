"""The CC classifier (pure) on queue timelines recorded from real probes on the testbed
(tests/cc/fixtures, written by tests/cc/record_fixtures.py: caddy with the server CC set, the
shaper as Igor's bottleneck, curl in the client namespace)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from protolens.cc.classify import LOSS_WINDOW_MS, classify, overflow_bytes
from protolens.cc.igor import TRUTH
from protolens.cc.model import DELAY_BASED, INCONCLUSIVE, LOSS_BASED, TOO_SMALL, QueueTimeline

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))


def load(path: Path) -> tuple[dict[str, Any], QueueTimeline]:
    d = json.loads(path.read_text())
    return d["row"], QueueTimeline.from_json(d["timeline"])


def verdict_of(row: dict[str, Any], t: QueueTimeline, body: int | None = None) -> Any:
    return classify(t, row["bytes"] if body is None else body, row["mss"], row["rtt_ms"],
                    row["transfer_ms"])


def by_name(name: str) -> tuple[dict[str, Any], QueueTimeline]:
    return load(Path(__file__).parent / "fixtures" / f"{name}.json")


def test_fixtures_cover_the_grid() -> None:
    assert len(FIXTURES) >= 40
    ccs = {load(p)[0]["server_cc"] for p in FIXTURES}
    assert ccs == {"cubic", "cubic-nohystart", "reno", "bbr"}


@pytest.mark.parametrize("path", [p for p in FIXTURES
                                  if load(p)[0]["size"] >= 160_000
                                  and load(p)[0]["packet_bytes"] == 500], ids=lambda p: p.stem)
def test_160kb_and_more_at_500_bytes_gets_the_true_class(path: Path) -> None:
    row, t = load(path)
    assert verdict_of(row, t).label == TRUTH[row["server_cc"]]


@pytest.mark.parametrize("path", [p for p in FIXTURES if load(p)[0]["packet_bytes"] == 100
                                  and load(p)[0]["size"] >= 50_000], ids=lambda p: p.stem)
def test_igors_100_byte_packets_judge_60_and_80_kb(path: Path) -> None:
    row, t = load(path)
    assert verdict_of(row, t).label == TRUTH[row["server_cc"]]


@pytest.mark.parametrize("path", [p for p in FIXTURES if load(p)[0]["size"] < 50_000],
                         ids=lambda p: p.stem)
def test_under_50kb_is_too_small_even_when_it_dropped(path: Path) -> None:
    row, t = load(path)
    assert verdict_of(row, t).label == TOO_SMALL


def test_a_drop_within_two_seconds_is_loss_based_and_says_when() -> None:
    row, t = by_name("reno-160k-500")
    assert t.first_drop_ms is not None and t.first_drop_ms < LOSS_WINDOW_MS
    v = verdict_of(row, t)
    assert v.label == LOSS_BASED
    assert f"{t.first_drop_ms / 1000:.2f} s" in v.reason
    assert v.evidence.max_queue_fraction > 0.95
    assert v.evidence.time_to_max_ms is not None and 500 < v.evidence.time_to_max_ms < 1000


def test_hystarts_late_drop_after_two_seconds_is_still_delay_based() -> None:
    row, t = by_name("cubic-320k-500")  # HyStart: left slow start, overflowed only at 2.3 s
    assert t.first_drop_ms is not None and t.first_drop_ms > LOSS_WINDOW_MS
    assert verdict_of(row, t).label == DELAY_BASED


def test_the_same_drop_moved_past_two_seconds_flips_the_label() -> None:
    row, t = by_name("cubic-nohystart-160k-500")
    late = replace(t, first_drop_ms=LOSS_WINDOW_MS + 10)
    assert verdict_of(row, t).label == LOSS_BASED
    assert verdict_of(row, late).label == DELAY_BASED


def test_no_drop_on_an_object_too_short_to_overflow_is_inconclusive() -> None:
    row, t = by_name("cubic-nohystart-80k-500")  # loss-based, but 80 KB ends first
    assert t.first_drop_ms is None
    v = verdict_of(row, t)
    assert v.label == INCONCLUSIVE and str(v.evidence.overflow_bytes) in v.reason


def test_1500_byte_packets_cannot_tell_160kb_apart() -> None:
    """Sec. 4.1: "a default MTU (1,500B) makes the protocols hard to distinguish"."""
    for cc in ("reno", "bbr"):
        row, t = by_name(f"{cc}-160k-1500")
        assert verdict_of(row, t).label == INCONCLUSIVE


def test_overflow_size_follows_path_and_queue() -> None:
    row, t = by_name("reno-160k-500")  # 1 Mbit/s, 100 ms, 100 x 500 B, mss 460
    assert t.rate_bps == 1_000_000 and t.buffer_bytes == 50_000
    assert overflow_bytes(t, 460, 100.0) == 2 * (12_500 + 50_000) * 448 // 500
    assert overflow_bytes(t, 460, 200.0) > overflow_bytes(t, 460, 100.0)


def test_timeline_json_round_trip() -> None:
    _, t = by_name("bbr-160k-500")
    assert QueueTimeline.from_json(json.loads(json.dumps(t.to_json()))) == t
