"""The loads of scripts/bench/stalls.py (adapter): the testbed, the two arms' launches, and the
watch that tells a loaded page from a stalled one from caddy's log and a late DevTools probe."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec, command_line
from protolens.browser.launch import run_load, scratch_env, stop
from protolens.browser.profile import seed_preferences
from protolens.lab.runner import LAB_QUIET_MS
from scripts.devkit.harness import CHROMIUM, DIST, stored_ids

TESTBED = "plst"
PROBE = Path(__file__).with_name("stall_probe.py")
FIRST_START_S = 0.6
"""The plain arm's navigation delay before any recorded load has been measured."""
NO_REQUEST_S = 30.0
"""A load whose page request caddy has not logged this long after launch did not start."""
RECORD_S = 15.0
"""After the load event, how long the recorded arm waits for its record to be stored."""


class Watch:
    """Reads caddy's access log from ``offset`` on; ``step()`` is True once the load's outcome
    is known: ``loaded``, ``stalled`` (no load event ``stall_s`` after the page's request) or
    ``no_request``."""

    def __init__(self, log: Path, offset: int, page_url: str, expected: set[tuple[str, str]],
                 stall_s: float, probe: Callable[[float], dict[str, Any]]) -> None:
        self.log, self.pos, self.buf = log, offset, b""
        self.page = (urlsplit(page_url).hostname or "", urlsplit(page_url).path)
        self.expected, self.seen = expected, set[tuple[str, str]]()
        self.stall_s, self.probe = stall_s, probe
        self.launched = time.time()
        self.requested: float | None = None
        self.outcome: str | None = None
        self.state: dict[str, Any] = {}

    def _read(self) -> None:
        if not self.log.exists():
            return
        with self.log.open("rb") as f:
            f.seek(self.pos)
            chunk = f.read()
        self.pos += len(chunk)
        *lines, self.buf = (self.buf + chunk).split(b"\n")
        for line in lines:
            req = json.loads(line).get("request", {})
            key = (str(req.get("host", "")).split(":")[0], str(req.get("uri", "")))
            if key in self.expected:
                self.seen.add(key)
            if key == self.page and self.requested is None:
                self.requested = float(json.loads(line)["ts"])

    def step(self) -> bool:
        if self.outcome is not None:
            return True
        self._read()
        now = time.time()
        if self.requested is None:
            if now - self.launched > NO_REQUEST_S:
                self.outcome = "no_request"
            return self.outcome is not None
        left = self.requested + self.stall_s - now
        if self.seen < self.expected and left > 0:
            return False
        self.state = self.probe(max(0.0, left))
        led = self.state.get("state", {}).get("led")
        self.outcome = "loaded" if led else "stalled"
        return True


def sockets(tb: Any) -> list[str]:
    """At a stall, both ends' sockets of port 443 (``ss -ni``: queues, cwnd, unacked,
    retransmissions; TCP and, for h3, UDP): the client's, then caddy's (``server:`` lines).
    Data waiting in caddy's send queue with an idle client points at the path or flow control,
    an empty one at requests never sent."""
    lines = []
    for side, argv in (("", tb.exec_argv), ("server: ", tb.server_argv)):
        for proto, port in (("-tniH", "dport"), ("-uniH", "dport")):
            if side:
                port = "sport"
            p = subprocess.run(argv(["ss", proto, port, "=", ":443"]), capture_output=True,
                               text=True, timeout=10)
            lines += [side + " ".join(line.split()) for line in p.stdout.splitlines()][:12]
    return lines


def shaper(tb: Any, since_s: float) -> dict[str, Any]:
    """At a stall, what the shaper saw: how late it released packets, each direction's counts,
    and the flows active since ``since_s`` (epoch s) with their last packet's age: a flow whose
    server keeps retransmitting into the shaper is a path problem, a silent one is not."""
    s = tb.stats(False)
    now = s["wall_ns"]
    flows = [{**{k: f[k] for k in ("proto", "client_port", "server_port", "packets_up",
                                   "packets_down", "bytes_down", "drops_down")},
              "idle_ms": round((now - f["last_ns"]) / 1e6)}
             for f in s["flows"] if f["last_ns"] >= since_s * 1e9]
    return {"lateness": s["lateness"],
            "dirs": {d: {k: v for k, v in c.items() if k != "params"}
                     for d, c in s["dirs"].items()},
            "flows": sorted(flows, key=lambda f: f["idle_ms"])[:12]}


def probe(tb: Any, udd: Path, url: str, wait_s: float, since_s: float,
          dump: tuple[Path, str] | None = None) -> dict[str, Any]:
    """The page's state (stall_probe.py); at a stall also both ends' sockets, the shaper and,
    with ``dump`` (directory, name), caddy's goroutines while the browser still holds its
    connections."""
    p = subprocess.run(tb.exec_argv([sys.executable, str(PROBE), str(udd), url, f"{wait_s:.2f}"]),
                       capture_output=True, text=True, timeout=wait_s + 30)
    try:
        out = dict(json.loads(p.stdout))
    except ValueError:
        out = {"error": f"probe: {p.stderr.strip()[-300:]}"}
    if not out.get("state", {}).get("led"):
        out["sockets"] = sockets(tb)
        out["shaper"] = shaper(tb, since_s)
        if dump:
            out["caddy_dump"] = dump_caddy(tb, *dump)
    return out


def dump_caddy(tb: Any, keep: Path, name: str) -> str:
    """At a stall, caddy's goroutines: whether its HTTP/2 handlers wait to write headers or
    data. Caddy traps SIGQUIT ("quitting process immediately", no dump), not SIGABRT, on which
    the Go runtime prints every goroutine's stack and exits (https://pkg.go.dev/os/signal,
    "Default behavior of signals in Go programs"). Caddy is gone afterwards: the batch ends."""
    import signal
    log = Path(tb.state.caddy_log)
    start = log.stat().st_size
    os.kill(tb.state.pids["caddy"], signal.SIGABRT)
    time.sleep(3)
    keep.mkdir(parents=True, exist_ok=True)
    out = keep / f"{name}.caddy-goroutines.txt"
    with log.open("rb") as f:
        f.seek(start)
        out.write_bytes(f.read())
    return str(out)


def spec(tb: Any, target: Any, arm: Arm, extension: str, extra: list[str],
         udd: str = "") -> LaunchSpec:
    return LaunchSpec(chromium=CHROMIUM, user_data_dir=udd, extension_dir=extension, arm=arm,
                      origins=target.origins, spki=[tb.state.spki], host_rules=tb.host_rules(),
                      extra=["--remote-debugging-port=0", *extra])


def netlog(scratch: Path) -> list[str]:
    """Chromium's NetLog of the load (a diagnosis: where the requests that were never sent
    are waiting)."""
    return [f"--log-net-log={scratch / 'netlog.json'}", "--net-log-capture-mode=Default"]


def plain(tb: Any, target: Any, arm: Arm, scratch: Path, start_s: float,
          watch: Callable[[Path], Watch], extra: list[str]) -> Watch:
    """No extension: the same flags, navigating ``start_s`` after launch (as the lab extension
    does once the host has answered: recorder_overhead_testbed.py)."""
    udd = scratch / "profile"
    seed_preferences(udd)
    argv = [a for a in command_line(spec(tb, target, arm, "", extra, str(udd)))
            if "extension" not in a][:-1]
    w = watch(udd)
    at_ms = round((w.launched + start_s) * 1000)
    argv.append(f"data:text/html,<script>setTimeout(()=>location.href='{target.url}',"
                f"{at_ms}-Date.now())</script>")
    with (scratch / "chromium.log").open("wb") as log:
        proc = subprocess.Popen(tb.exec_argv(argv), env=scratch_env(os.environ, scratch / "xdg"),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while not w.step():
                time.sleep(0.1)
        finally:
            stop(proc)
    return w


def recorded(tb: Any, target: Any, arm: Arm, scratch: Path, db: Path, extension: Path,
             visual: bool, watch: Callable[[Path], Watch],
             extra: list[str]) -> tuple[Watch, bool | None]:
    """The lab path (browser/launch.py run_load); returns the watch and whether the record was
    stored (None: the page did not load)."""
    load_id = str(uuid.uuid4())
    w = watch(scratch / "profile")
    since: list[float] = []

    def done() -> bool:
        if not w.step():
            return False
        if w.outcome != "loaded":
            return True
        since.append(time.monotonic())
        return bool(stored_ids(db, load_id)) or time.monotonic() - since[0] > RECORD_S

    run_load(spec(tb, target, arm, str(extension), extra), scratch=scratch, db=db,
             navigate=[target.url], context={"load_id": load_id}, done=done,
             timeout_s=NO_REQUEST_S + 60,
             prefix=tb.exec_argv(), quiet_ms=LAB_QUIET_MS, visual=visual)
    return w, (bool(stored_ids(db, load_id)) if w.outcome == "loaded" else None)


def run_batch(args: argparse.Namespace,
              build: Callable[[Path, str, Path], tuple[Path, bool]]) -> None:
    """``build(dist, variant, work)``: the variant's extension directory and whether it
    captures paint."""
    from protolens.lab.testbed_network import TestbedNetwork
    from protolens.pages import ensure_corpus
    from protolens.testbed import Testbed

    arm = Arm(args.arm)
    batch = time.strftime("%Y%m%dT%H%M%S")
    Testbed.down(TESTBED)
    tb = Testbed.up(name=TESTBED, profile=args.profile, server_cc="cubic")
    try:
        target = TestbedNetwork(tb, owned=True).targets([args.page])[args.page]
        (manifest,) = ensure_corpus(Path(tb.state.site), [args.page])
        expected = {(urlsplit(o.url).hostname or "", urlsplit(o.url).path)
                    for o in manifest.objects}
        log = Path(tb.state.access_log)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            ext, visual = build(DIST, args.variant, work)
            starts: list[float] = []
            prev: str | None = None  # the arm of the load just before (None: the batch's first)
            for i in range(args.loads):
                turn = i % 2 == 0 and args.order == "turn"
                for which in (("recorded", "plain") if turn else ("plain", "recorded")):
                    if args.only not in (None, which):
                        continue
                    scratch = work / f"{which}-{i}"
                    extra = netlog(scratch) if args.netlog else []
                    tb.flush_tcp_metrics()

                    dump = ((args.keep or work, f"{batch}-{which}-{i}") if args.dump_server
                            else None)

                    def watch(udd: Path, dump: tuple[Path, str] | None = dump) -> Watch:
                        return Watch(log, log.stat().st_size if log.exists() else 0, target.url,
                                     expected, args.stall_s,
                                     lambda s: probe(tb, udd, target.url, s, time.time() - 60,
                                                     dump))
                    stored = None
                    if which == "plain":
                        w = plain(tb, target, arm, scratch, statistics.median(starts)
                                  if starts else FIRST_START_S, watch, extra)
                    else:
                        w, stored = recorded(tb, target, arm, scratch, work / "bench.db", ext,
                                             visual, watch, extra)
                        if w.requested is not None:
                            starts.append(w.requested - w.launched)
                    row = {"batch": batch, "page": args.page, "profile": args.profile,
                           "proto": args.arm, "variant": args.variant, "arm": which, "i": i,
                           "outcome": w.outcome, "objects": len(w.seen),
                           "expected": len(expected), "record": stored, "after": prev,
                           "requested_s": None if w.requested is None
                           else round(w.requested - w.launched, 3), "probe": w.state}
                    if w.outcome != "loaded" and args.keep:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        keep = args.keep / f"{batch}-{which}-{i}.log"
                        shutil.copy(scratch / "chromium.log", keep)
                        if args.netlog:
                            shutil.copy(scratch / "netlog.json", keep.with_suffix(".netlog.json"))
                        row["kept"] = str(keep)
                    with args.out.open("a") as out:
                        out.write(json.dumps(row) + "\n")
                    if "caddy_dump" in w.state:
                        print(f"stalled: caddy's goroutines in {w.state['caddy_dump']}; batch "
                              "ends", file=sys.stderr)
                        return
                    print(f"{args.variant} {args.arm} {i + 1}/{args.loads} {which}: {w.outcome} "
                          f"({len(w.seen)}/{len(expected)} objects)", file=sys.stderr)
                    shutil.rmtree(scratch, ignore_errors=True)
                    prev = which
    finally:
        Testbed.down(TESTBED)
