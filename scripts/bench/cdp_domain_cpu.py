#!/usr/bin/env python3
"""What each DevTools domain the recorder turns on costs in CPU per load (issue 22, target 2:
"break the cost down per DevTools domain").

The recorder's own commands (src/cdp/enable-commands.ts: TAB_COMMANDS, OPTIONAL_COMMANDS,
SCREENCAST and, for each auto-attached child, CHILD_COMMANDS; read from the TypeScript through
tsx, so the bench follows the recorder) are sent by cdp_source_ext.py's minimal extension
through ``chrome.debugger``, the recorder's path, but with no ProtoLens code: nothing is done
with the events beyond acknowledging screencast frames. Arms are cumulative, one domain group
more each, in this order:

- ``plain``: Page.enable (the extension needs the load event);
- ``+lifecycle``: Page.setLifecycleEventsEnabled;
- ``+network``: Network.enable;
- ``+performance``: Performance.enable;
- ``+runtime``: Runtime.enable, the LCP binding and its script
  (Page.addScriptToEvaluateOnNewDocument);
- ``+auto-attach``: Target.setAutoAttach, each child (the test page's iframe) given the child
  commands and resumed;
- ``+service-worker``: ServiceWorker.enable;
- ``+screencast``: Page.startScreencast, the visual metrics' frames (only with ``--screencast``).

The test site's page (loopback, 30 requests), 1 + K + 1 loads per browser, each 0.9 s after the
load event; CPU of every process of the browser's group from /proc between the beacons of loads 2
and 2 + K, divided by K (cdp_source_ext.py). The arms run back to back in each round, the order
rotated round by round. Prints each arm's medians per process kind, then what each step adds
over the arm before it: the median of the rounds' differences with its 95% interval.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/cdp_domain_cpu.py
       [--loads 8] [--rounds 5] [--screencast]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.bench.cdp_source_ext import Command, run_via_debugger  # noqa: E402
from scripts.bench.collector_ingest import median_interval  # noqa: E402
from scripts.bench.recorder_cpu import print_table, rotated  # noqa: E402
from scripts.devkit.site import serve_site  # noqa: E402

GROUPS = {"Page.enable": "plain", "Page.setLifecycleEventsEnabled": "+lifecycle",
          "Network.enable": "+network", "Performance.enable": "+performance",
          "Runtime.enable": "+runtime", "Runtime.addBinding": "+runtime",
          "Page.addScriptToEvaluateOnNewDocument": "+runtime",
          "Target.setAutoAttach": "+auto-attach", "ServiceWorker.enable": "+service-worker",
          "Page.startScreencast": "+screencast"}
ORDER = ("plain", "+lifecycle", "+network", "+performance", "+runtime", "+auto-attach",
         "+service-worker", "+screencast")

PRINT_COMMANDS = """
import { CHILD_COMMANDS, OPTIONAL_COMMANDS, SCREENCAST, TAB_COMMANDS }
  from "./src/cdp/enable-commands.ts";
const tab = [...TAB_COMMANDS, ...OPTIONAL_COMMANDS, SCREENCAST];
const optional = OPTIONAL_COMMANDS.map((c) => c.method);
console.log(JSON.stringify({ tab, child: CHILD_COMMANDS, optional }));
"""


def recorder_commands() -> tuple[list[Command], list[Command], list[str]]:
    """The recorder's tab commands (in the order it sends them), child commands and the
    methods whose refusal it lets pass."""
    out = subprocess.run(["npx", "--no-install", "tsx", "-e", PRINT_COMMANDS], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    got: dict[str, Any] = json.loads(out)
    tab = [(c["method"], c.get("params", {})) for c in got["tab"]]
    child = [(c["method"], c.get("params", {})) for c in got["child"]]
    unknown = sorted({m for m, _ in tab} - GROUPS.keys())
    if unknown:
        raise SystemExit(f"cdp_domain_cpu: the recorder sends commands this bench does not place "
                         f"in a group: {', '.join(unknown)}")
    return tab, child, list(got["optional"])


def arms(tab: list[Command], child: list[Command], screencast: bool
         ) -> list[tuple[str, list[Command], list[Command]]]:
    """Cumulative arms: (name, tab commands in the recorder's order, child commands)."""
    names = [n for n in ORDER if screencast or n != "+screencast"]
    out = []
    for i, name in enumerate(names):
        on = set(names[:i + 1])
        out.append((name, [c for c in tab if GROUPS[c[0]] in on],
                    child if "+auto-attach" in on else []))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=8, help="K: loads measured per browser")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--screencast", action="store_true",
                    help="one more arm: the visual metrics' screencast")
    args = ap.parse_args()
    tab, child, optional = recorder_commands()
    plan = arms(tab, child, args.screencast)
    got: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in plan}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with serve_site(work / "site") as site:
            for r, (name, on, kids) in rotated(plan, args.rounds):
                cpu, seen = run_via_debugger(site, work / f"{name}-{r}", name, args.loads, on,
                                             kids, optional)
                got[name].append(cpu)
                print(f"round {r + 1}/{args.rounds} {name}: total {sum(cpu.values()):.1f} "
                      f"ms/load ({seen})", file=sys.stderr, flush=True)
    print_table(got, f"via chrome.debugger, median of {args.rounds} rounds of {args.loads} "
                     f"loads", 16)
    print("what each step adds over the arm before it (ms of CPU per load; median of the "
          "rounds' differences, 95% interval)")
    for (prev, _, _), (name, _, _) in zip(plan, plan[1:], strict=False):
        diffs = [sum(a.values()) - sum(b.values()) for a, b in zip(got[name], got[prev],
                                                                    strict=True)]
        lo, hi = median_interval(diffs)
        print(f"  {name:<16}{statistics.median(diffs):8.1f}  ({lo:.1f} to {hi:.1f}; rounds: "
              f"{', '.join(f'{d:.0f}' for d in diffs)})")


if __name__ == "__main__":
    main()
