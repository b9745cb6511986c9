#!/usr/bin/env python3
"""Benchmark the protocol-translating lab proxy (not a test): page load time through the proxy
with an ``h2`` policy (arm ``proxy-h2``) against direct h2 (arm ``h2``), under ``wifi`` and
``fiber``, 10 interleaved loads each (the campaign shuffles cells within each repetition), as
the median PLT ratio; plus the proxy process's CPU time per proxied load (sampled from /proc).
Needs root; brings up its own testbed "plpb" and removes it afterwards.

    .venv/bin/python scripts/bench/proxy_overhead.py [--reps 10] [--page ifip18-facebook] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.proccpu import TICK, cpu_ticks  # noqa: E402

NAME = "plpb"


def proxy_cpu() -> dict[int, float]:
    """CPU seconds of every running lab proxy process (python -m protolens.proxy)."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"protolens.proxy" not in cmd:
                continue
            out[int(pid)] = cpu_ticks(int(pid)) / TICK
        except (OSError, IndexError, ValueError):
            continue
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--page", default="ifip18-facebook")
    ap.add_argument("--conditions", default="wifi,fiber",
                    help="shaper profiles, comma-separated (default wifi,fiber)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    conds = tuple(args.conditions.split(","))
    db = Path(tempfile.mkdtemp(prefix="protolens-bench-")) / "bench.db"
    cli = [sys.executable, "-m", "protolens.cli"]
    subprocess.run([*cli, "testbed", "down", "--name", NAME], capture_output=True)
    run = subprocess.Popen([*cli, "lab", "run", "--pages", args.page, "--arms", "h2,proxy-h2",
                            "--conditions", ",".join(conds), "--reps", str(args.reps), "--campaign",
                            "bench", "--seed", "1", "--testbed", NAME, "--db", str(db)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    cpu: dict[int, float] = {}
    while run.poll() is None:
        cpu.update(proxy_cpu())
        time.sleep(0.2)
    err = (run.stderr.read() if run.stderr else "")[-500:]
    if run.returncode != 0 and not db.exists():
        print(f"campaign failed: {err}", file=sys.stderr)
        return 1
    with sqlite3.connect(db) as conn:
        failed = conn.execute("SELECT arm, count(*) FROM loads WHERE status = 'failed' "
                              "GROUP BY arm").fetchall()
    if failed:  # stored with their reason and retried by the campaign (docs/TESTBED.md)
        print("failed attempts (retried): " + ", ".join(f"{a} {n}" for a, n in failed),
              file=sys.stderr)
    from protolens.lab.estimate import Cells, ratio
    with sqlite3.connect(db) as conn:
        plt = {}
        for cond in conds:
            for arm in ("h2", "proxy-h2"):
                plt[(cond, arm)] = [r[0] for r in conn.execute(
                    "SELECT load_ms FROM navigations WHERE condition = ? AND arm = ? AND "
                    "load_ms IS NOT NULL AND failed = 0", (cond, arm))]
    cells = Cells({(args.page, c, a): tuple(sorted(v)) for (c, a), v in plt.items()})
    result: dict[str, object] = {"page": args.page, "reps": args.reps,
                                 "failed_attempts": dict(failed)}
    for cond in conds:
        direct, proxied = plt[(cond, "h2")], plt[(cond, "proxy-h2")]
        est = ratio(cells, f"proxy-h2 / h2 {cond}", [(None, cond, "proxy-h2")],
                    [(None, cond, "h2")])
        result[cond] = {"n": [len(direct), len(proxied)],
                        "direct_h2_median_ms": statistics.median(direct),
                        "proxy_h2_median_ms": statistics.median(proxied),
                        "ratio": statistics.median(proxied) / statistics.median(direct),
                        "ci_low": est.low, "ci_high": est.high}
    loads = sum(len(plt[(c, "proxy-h2")]) for c in conds)
    result["proxy_cpu_s_per_load"] = sum(cpu.values()) / loads if loads else None
    result["proxy_cpu_note"] = "includes the proxy's start-up (one per campaign)"
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for cond in conds:
            r = result[cond]
            assert isinstance(r, dict)
            print(f"{cond:6} direct h2 {r['direct_h2_median_ms']:8.1f} ms  via proxy "
                  f"{r['proxy_h2_median_ms']:8.1f} ms  ratio x{r['ratio']:.3f} "
                  f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}] (n={r['n']}, 95% bootstrap "
                  "interval of the ratio of medians)")
        print(f"proxy CPU per proxied load: {result['proxy_cpu_s_per_load']:.3f} s "
              "(incl. start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
