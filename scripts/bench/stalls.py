#!/usr/bin/env python3
"""Benchmark (not a test): do recorded loads stall more often than plain ones?

A stall: the page's load event has not come ``--stall-s`` seconds after caddy logged the page's
request (docs/TESTBED.md "Loads that stall"). ``run`` brings up its own testbed ("plst", server
CC cubic, the ``--profile`` link), then alternates, in a turning order, a recorded load (the lab
path: lab extension, native host, SQLite, paint capture on as in ``lab run``) and a plain load
(the same flags and launch in the client namespace, no extension, navigating as late after
launch as the recorded loads do), ``--loads`` of each, and appends one JSON line per load to
``--out``; the testbed goes down at the end. Nothing watches a page while it loads: caddy's log
says when every object has been served, and only then, or once the stall time has passed, a
DevTools probe (stall_probe.py) reads the page's loadEventEnd and state.

``--variant`` switches one thing off in the recorded arm (a copy of dist/ with one enable
command cut out of its worker bundle, or paint capture off), to bisect a stall rate; the product
has no such switch. ``summary`` prints, per page, profile, protocol and variant, each arm's stall
rate with its 95% Wilson interval and the difference with Newcombe's interval (stall_stats.py).

    flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/stalls.py run \\
        --loads 30 --arm h2 --variant full --out /tmp/stalls.jsonl
    .venv/bin/python scripts/bench/stalls.py summary /tmp/stalls.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.bench.stall_stats import difference, wilson  # noqa: E402

# variant -> (exact edits of dist/background.js, paint capture on): each cuts one thing out of
# the tab's enable commands (src/cdp/enable-commands.ts TAB_COMMANDS, first occurrence)
VARIANTS: dict[str, tuple[tuple[tuple[str, str], ...], bool]] = {
    "full": ((), True),
    "no-screencast": ((), False),
    "no-runtime": ((('{ method: "Runtime.enable" },', ""),
                    ('{ method: "Runtime.addBinding", params: { name: LCP_BINDING, '
                     'executionContextName: LCP_WORLD } },', ""),
                    ('{ method: "Page.addScriptToEvaluateOnNewDocument", params: { source: '
                     'LCP_SCRIPT, worldName: LCP_WORLD } },', "")), True),
    "no-performance": ((('{ method: "Performance.enable", params: { timeDomain: "timeTicks" } },',
                         ""),), True),
    "no-lifecycle": ((('{ method: "Page.setLifecycleEventsEnabled", params: { enabled: true } },',
                       ""),), True),
    "no-autoattach": ((('{ method: "Target.setAutoAttach", params: AUTO_ATTACH },', ""),), True),
    "no-wait": ((("waitForDebuggerOnStart: true", "waitForDebuggerOnStart: false"),), True),
    # src/cdp/enable-commands.ts OPTIONAL_COMMANDS
    "no-serviceworker": ((('const OPTIONAL_COMMANDS = [{ method: "ServiceWorker.enable" }];',
                           "const OPTIONAL_COMMANDS = [];"),), True),
}


def build_variant(dist: Path, name: str, work: Path) -> tuple[Path, bool]:
    """dist/ itself for ``full``/``no-screencast``, else an edited copy under ``work``; and
    whether the variant captures paint."""
    import shutil
    edits, visual = VARIANTS[name]
    if not edits:
        return dist, visual
    out = work / f"ext-{name}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(dist, out)
    bundle = out / "background.js"
    text = bundle.read_text()
    for old, new in edits:
        if old not in text:
            raise SystemExit(f"error: variant {name}: {old!r} is not in {bundle}")
        text = text.replace(old, new, 1)
    bundle.write_text(text)
    return out, visual


def previous(row: dict[str, object], mixed: set[object]) -> object:
    """The arm of the load before this one in its batch. Rows without the field come from the
    turn order (load i's recorded arm went first when i was even) or, in a batch without plain
    loads (``mixed``: the batches with both arms), from recorded loads only."""
    if "after" in row:
        return row["after"]
    i = int(str(row["i"]))
    if row["batch"] not in mixed:
        return None if i == 0 else "recorded"
    if i % 2:
        return "plain"
    return "recorded" if i or row["arm"] == "plain" else None


def summary(paths: list[Path]) -> None:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line]
    mixed = {r["batch"] for r in rows if r["arm"] == "plain"}
    groups: dict[tuple[str, str, str, str], dict[str, list[dict[str, object]]]] = {}
    for r in rows:
        key = (r["page"], r["profile"], r["proto"], r["variant"])
        groups.setdefault(key, {"recorded": [], "plain": []})[r["arm"]].append(r)
    print("stall = no load event within the stall time of the page's request; 95% intervals "
          "(Wilson; difference: Newcombe)")
    for (page, profile, proto, variant), arms in sorted(groups.items()):
        rates = {}
        for arm, loads in arms.items():
            done = [x for x in loads if x["outcome"] in ("loaded", "stalled")]
            k = sum(x["outcome"] == "stalled" for x in done)
            rates[arm] = wilson(k, len(done))
            other = len(loads) - len(done)
            missing = sum(x.get("record") is False for x in done if x["outcome"] == "loaded")
            r = rates[arm]
            print(f"{page} {profile} {proto} {variant:<14} {arm:<8} {k:3d}/{r.n:<3d} "
                  f"{100 * r.p:5.1f}% [{100 * r.low:4.1f}, {100 * r.high:4.1f}]"
                  + (f"  {other} not started" if other else "")
                  + (f"  {missing} loaded without a stored record" if missing else ""))
        for arm, loads in sorted(arms.items(), reverse=True):
            by_prev: dict[str, list[int]] = {}
            for x in loads:
                if x["outcome"] in ("loaded", "stalled"):
                    seen = by_prev.setdefault(str(previous(x, mixed)), [0, 0])
                    seen[0] += x["outcome"] == "stalled"
                    seen[1] += 1
            if by_prev:
                print(f"{'':>{len(page) + len(profile) + len(proto) + 18}} {arm}, by the load "
                      "before: " + ", ".join(f"after {k} {s}/{n}"
                                             for k, (s, n) in sorted(by_prev.items())))
        if rates["recorded"].n and rates["plain"].n:
            d, low, high = difference(rates["recorded"], rates["plain"])
            print(f"{'':>{len(page) + len(profile) + len(proto) + 18}} recorded - plain "
                  f"{100 * d:+5.1f} points [{100 * low:+5.1f}, {100 * high:+5.1f}]")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="one batch of loads (hold the heavy lock)")
    run.add_argument("--loads", type=int, default=30, help="loads per arm (default 30)")
    run.add_argument("--page", default="ifip18-facebook")
    run.add_argument("--profile", default="wifi", help="shaper profile (default wifi)")
    run.add_argument("--arm", default="h2", choices=("h1", "h2", "h3"))
    run.add_argument("--variant", default="full", choices=sorted(VARIANTS))
    run.add_argument("--stall-s", type=float, default=20.0)
    run.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    run.add_argument("--keep", type=Path, help="copy each stalled load's browser log here")
    run.add_argument("--only", choices=("recorded", "plain"), help="one arm only (a diagnosis)")
    run.add_argument("--netlog", action="store_true",
                     help="each load writes Chromium's NetLog, kept with a stalled load's log")
    run.add_argument("--order", choices=("turn", "plain-first"), default="turn",
                     help="turn: the arms take turns going first (default); plain-first: every "
                          "recorded load follows a plain one (where every stall was seen)")
    run.add_argument("--dump-server", action="store_true",
                     help="at the first stall, caddy's goroutine dump (SIGABRT); the batch ends")
    summ = sub.add_parser("summary", help="stall rates of one or more --out files")
    summ.add_argument("files", type=Path, nargs="+")
    args = ap.parse_args()
    if args.cmd == "summary":
        summary(args.files)
        return 0
    from scripts.bench.stall_loads import run_batch
    run_batch(args, build_variant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
