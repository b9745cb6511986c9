"""``lab reproduce conext20-igor`` (pure): the grid of CoNEXT'20 Table 1 (server CC x object size
x MTU), the paper's numbers to print beside ours, the true class of each CC, and the confusion
matrix of labels against it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protolens.cc.model import DELAY_BASED, LABELS, LOSS_BASED

CCS = ("cubic", "cubic-nohystart", "reno", "bbr")
SIZES = (40_000, 80_000, 160_000, 320_000)
PACKETS = (500, 1500)
TRUTH = {"cubic": DELAY_BASED, "bbr": DELAY_BASED, "cubic-nohystart": LOSS_BASED,
         "reno": LOSS_BASED}
"""Sec. 4.1: CUBIC with HyStart and BBR are delay-based in the paper's sense; CUBIC
with plain slow start and Reno are loss-based."""
PAPER_ROW = {"cubic": "HyStart", "cubic-nohystart": "CUBIC", "bbr": "BBR", "reno": None}
"""The paper's Table 1 has no Reno row (it has YeAH and Illinois, which this kernel lacks)."""
PAPER: dict[tuple[str, int], tuple[tuple[int, float] | None, ...]] = {
    ("BBR", 500): ((20, 0.3), (20, 0.7), (20, 0.7), (30, 0.8)),
    ("CUBIC", 500): ((40, 0.8), (90, 1.3), (100, 1.4), (100, 1.5)),
    ("HyStart", 500): ((20, 0.8), (20, 0.8), (30, 3.0), (80, 6.4)),
    ("BBR", 1500): ((10, 0.6), (20, 0.6), (20, 0.6), (20, 0.6)),
    ("CUBIC", 1500): (None, (20, 0.6), (50, 1.0), (80, 1.1)),
    ("HyStart", 1500): ((10, 0.5), (20, 0.6), (40, 0.8), (40, 0.8)),
}
"""CoNEXT'20 Table 1: (max queue occupancy in % of a 100-packet queue, time to it in s) for
40, 80, 160 and 320 KB; None where the paper's cell is empty."""
FINDING = ("delay-based algorithms rarely occupy more than 30% of the queue (only HyStart with "
           "320 KB); loss-based ones fill it quickly, in about 1.5 s, before overflow; a "
           "1,500-byte MTU makes them hard to distinguish (Sec. 4.1, Table 1)")


@dataclass(frozen=True)
class Cell:
    cc: str
    size: int
    packet_bytes: int


def grid(ccs: Sequence[str] = CCS, sizes: Sequence[int] = SIZES,
         packets: Sequence[int] = PACKETS) -> list[Cell]:
    return [Cell(cc, s, p) for cc in ccs for p in packets for s in sizes]


def paper_cell(cc: str, size: int, packet_bytes: int) -> tuple[int, float] | None:
    row = PAPER_ROW.get(cc)
    if row is None or size not in SIZES or (row, packet_bytes) not in PAPER:
        return None
    return PAPER[(row, packet_bytes)][SIZES.index(size)]


def table_rows(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per probe (a ``ProbeResult.row()`` plus ``size``), beside the paper's cell."""
    out = []
    for r in results:
        paper = paper_cell(r["server_cc"], r["size"], r["packet_bytes"])
        truth = TRUTH.get(r["server_cc"])
        out.append({
            "server_cc": r["server_cc"], "mtu": r["packet_bytes"], "size_kb": r["size"] // 1000,
            "max_queue_pct": round(100 * r["max_queue_fraction"]),
            "time_to_max_s": None if r["time_to_max_ms"] is None
            else round(r["time_to_max_ms"] / 1000, 2),
            "first_loss_s": None if r["first_loss_ms"] is None
            else round(r["first_loss_ms"] / 1000, 2),
            "label": r["label"], "truth": truth, "right": r["label"] == truth,
            "paper_max_queue_pct": paper[0] if paper else None,
            "paper_time_to_max_s": paper[1] if paper else None})
    return out


def confusion(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """truth -> label -> count, every label present (zeros included)."""
    m = {t: dict.fromkeys(LABELS, 0) for t in (LOSS_BASED, DELAY_BASED)}
    for r in rows:
        if r["truth"] in m:
            m[r["truth"]][r["label"]] += 1
    return m


def accuracy(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(labels right, probes)."""
    return sum(1 for r in rows if r["right"]), len(rows)


def summary_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Our numbers in the paper's terms: max queue of delay- vs loss-based, time to fill."""
    lines = []
    right, total = accuracy(rows)
    decisive = [r for r in rows if r["label"] in (LOSS_BASED, DELAY_BASED)]
    wrong = sum(1 for r in decisive if not r["right"])
    lines.append(f"labels right: {right}/{total}; decisive labels {len(decisive)}, wrong "
                 f"{wrong}; abstained (too-small-to-judge or inconclusive) "
                 f"{total - len(decisive)}")
    for mtu in sorted({r["mtu"] for r in rows}):
        delay = [r["max_queue_pct"] for r in rows if r["mtu"] == mtu and r["truth"] == DELAY_BASED]
        loss = [r for r in rows if r["mtu"] == mtu and r["truth"] == LOSS_BASED]
        full = [r["time_to_max_s"] for r in loss if r["max_queue_pct"] >= 90
                and r["time_to_max_s"] is not None]
        over30 = sum(1 for q in delay if q > 30)
        lines.append(
            f"MTU {mtu}: delay-based above 30% of the queue in {over30}/{len(delay)} probes "
            f"(max {max(delay, default=0)}%); loss-based filled it (>= 90%) in "
            f"{len(full)}/{len(loss)}" + (f", after {sum(full) / len(full):.2f} s on average"
                                          if full else ""))
    return lines
