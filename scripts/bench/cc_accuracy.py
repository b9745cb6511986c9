#!/usr/bin/env python3
"""The CC fingerprint's accuracy and cost on the testbed (docs/CC.md). Needs root; brings up its own
testbed "ccb" once per server CC. Run under the heavy lock:

    flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/cc_accuracy.py [--reps 1]

1. Accuracy over the whole conext20-igor grid (CoNEXT'20 Table 1: 4 CCs x 40/80/160/320 KB x
   500/1500-byte MTU): labels right / probes, per CC, per size and MTU.
2. Wall time per probe beside the object's transfer time (the ratio is the probe's overhead:
   HEAD, shaping, advmss, queue log).
3. The smallest object labelled right for every CC with Igor's own packet rule (100-byte packets
   under 100 KB, 500 above).
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from protolens.cc import igor
from protolens.cc.reproduce import result_row, run_grid

SWEEP = (60_000, 80_000, 100_000, 120_000, 160_000)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    cells = igor.grid() * args.reps
    sweep = [igor.Cell(cc, s, 0) for cc in igor.CCS for s in SWEEP] * args.reps
    grid_res = run_grid(cells, testbed="ccb")
    rows = [(c, result_row(c, r)) for c, r, _ in grid_res if r is not None]
    errors = [e for _, r, e in grid_res if r is None]
    table = igor.table_rows(r for _, r in rows)
    right, total = igor.accuracy(table)
    print(f"grid: {right}/{total} labels right ({100 * right / max(total, 1):.0f}%), "
          f"{len(errors)} probe errors, reps {args.reps}")
    by: dict[tuple[str, object], list[bool]] = defaultdict(list)
    for t in table:
        by[("cc", t["server_cc"])].append(t["right"])
        by[("size@mtu", f"{t['size_kb']} KB @ {t['mtu']} B")].append(t["right"])
    for (kind, key), oks in sorted(by.items(), key=lambda x: (x[0][0], str(x[0][1]))):
        print(f"  {kind:8s} {key!s:18s} {sum(oks)}/{len(oks)}")
    print("confusion (true class -> labels):")
    for truth, counts in igor.confusion(table).items():
        print(f"  {truth:12s} " + "  ".join(f"{k} {v}" for k, v in counts.items()))
    print("wall time per probe vs the object's transfer (median, min-max; ratio = overhead):")
    walls: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for c, r in rows:
        walls[(c.packet_bytes, c.size)].append((r["wall_ms"], r["transfer_ms"]))
    for (mtu, size), xs in sorted(walls.items()):
        w = [x[0] for x in xs]
        t = [x[1] for x in xs]
        print(f"  {size // 1000:4d} KB @ {mtu:4d} B: probe {statistics.median(w):7.0f} ms "
              f"({min(w):.0f}-{max(w):.0f})  transfer {statistics.median(t):7.0f} ms  ratio "
              f"x{statistics.median(w) / statistics.median(t):.2f}  n={len(xs)}")
    sweep_res = run_grid([igor.Cell(c.cc, c.size, 0) for c in sweep], testbed="ccb")
    ok: dict[int, list[bool]] = defaultdict(list)
    for c, r, _ in sweep_res:
        ok[c.size].append(r is not None and r.verdict.label == igor.TRUTH[c.cc])
        if r is not None:
            print(f"  sweep {c.cc:16s} {c.size // 1000:4d} KB @ {r.timeline.packet_bytes} B: "
                  f"{r.verdict.label} ({r.wall_ms:.0f} ms)")
    good = [s for s in sorted(ok) if all(ok[s])]
    print("smallest object labelled right for every CC (Igor's packet rule): "
          + (f"{good[0] // 1000} KB" if good else "none in the sweep")
          + "  [" + ", ".join(f"{s // 1000} KB {sum(ok[s])}/{len(ok[s])}" for s in sorted(ok))
          + "]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
