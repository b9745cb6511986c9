#!/usr/bin/env python3
"""The recorder's CPU per load, from /proc: the test site's page (scripts/devkit/site.py, loopback)
loaded 1 + K times in one headless Chromium, per arm:

- ``plain``: no extension; a bare DevTools client (``--remote-debugging-port``, a session on the
  page with no domain enabled) sends each ``Page.navigate`` once the previous load's beacon is in
  caddy's log and 0.6 s have passed (the recorder's 500 ms quiet and the store's write);
- ``recording``: the lab extension and host (``lab run``'s launch, browser/launch.py run_load)
  record the same 1 + K loads, the next once the last is stored;
- ``recording+visual``: the same with the visual metrics on (``lab run``'s default).

The CPU of every process in the browser's process group (the native host included: it is the
browser's child) is read from /proc/PID/stat (utime + stime) every 0.1 s; a load's CPU is the
difference between the snapshot after load 1 and after load 1 + K, divided by K, so the browser's
start, the host's start and the first load's compilation are left out. Per process kind:
browser, renderer (the page), extension (the service worker's process), network, gpu, utility,
host. Arms run interleaved, R rounds, a fresh profile each; prints medians and the range.

``plain_browser`` is the plain arm's browser, also cdp_source_cpu.py's.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/recorder_cpu.py
       [--loads 10] [--rounds 3] [--extension NAME=DIR ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.arms import Arm  # noqa: E402
from protolens.browser.flags import LaunchSpec, command_line  # noqa: E402
from protolens.browser.launch import run_load, scratch_env, stop  # noqa: E402
from protolens.browser.profile import seed_preferences  # noqa: E402
from scripts.bench.recorder_overhead import beacon_after  # noqa: E402
from scripts.devkit.cdp import Cdp, endpoint  # noqa: E402
from scripts.devkit.harness import CHROMIUM, stored_ids  # noqa: E402
from scripts.devkit.site import Site, serve_site  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
KINDS = ("browser", "renderer", "extension", "network", "gpu", "utility", "host")


def kind(cmdline: str) -> str:
    """A process's kind from its command line (Chromium's zygote children rewrite theirs into
    one space-separated string, so it is read as text, not as NUL-separated arguments)."""
    exe = cmdline.split(" ", 1)[0]
    if exe == "" or "crashpad" in exe:
        return "utility"  # an exited process (its command line is empty), the crash handler
    if "chrom" not in exe:
        return "host"  # the native host (python) and anything else the browser started
    if "--type=renderer" in cmdline:
        return "extension" if "--extension-process" in cmdline else "renderer"
    if "NetworkService" in cmdline:
        return "network"
    if "--type=gpu-process" in cmdline:
        return "gpu"
    return "utility" if "--type=" in cmdline else "browser"


class Proc(NamedTuple):
    pid: int
    ppid: int
    pgid: int
    cmd: str
    """Its command line, NULs as spaces."""
    cpu_s: float
    """User + system CPU seconds so far."""


def processes() -> Iterator[Proc]:
    """Every process /proc shows now (one that exits meanwhile is left out)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            cmd = (d / "cmdline").read_bytes().decode(errors="replace").replace("\0", " ")
            yield Proc(int(d.name), int(fields[1]), int(fields[2]), cmd,
                       (int(fields[11]) + int(fields[12])) / TICK)
        except (OSError, ValueError):
            continue


class Sampler:
    """CPU seconds per process of one process group; a process that exits keeps its last value."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.seen: dict[int, tuple[str, float]] = {}

    def sample(self) -> dict[str, float]:
        for p in processes():
            if p.pgid == self.pgid:
                self.seen[p.pid] = (kind(p.cmd), p.cpu_s)
        out = dict.fromkeys(KINDS, 0.0)
        for k, cpu in self.seen.values():
            out[k] += cpu
        return out


def browser_pgid(udd: Path, timeout: float = 30) -> int:
    """The process group of the Chromium started with ``--user-data-dir=udd``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    cmd = (d / "cmdline").read_bytes().decode(errors="replace").split("\0")
                except OSError:
                    continue
                browser = not any(a.startswith("--type=") for a in cmd)
                if f"--user-data-dir={udd}" in cmd and browser:
                    return os.getpgid(int(d.name))
        time.sleep(0.05)
    raise RuntimeError(f"no browser with {udd}")


def per_load(first: dict[str, float], last: dict[str, float], k: int) -> dict[str, float]:
    return {n: (last[n] - first[n]) / k * 1000 for n in KINDS}


@contextmanager
def plain_browser(scratch: Path, spki: str, origins: Sequence[str] = (), protocol: str = "h2",
                  client: type[Cdp] = Cdp) -> Iterator[tuple[int, Any, str]]:
    """A headless Chromium with the lab's flags, a fresh profile and no extension, a bare
    DevTools client (of class ``client``) attached to its page: (browser pid = its process
    group, client, session)."""
    udd = scratch / "profile"
    seed_preferences(udd)
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd), extension_dir="",
                      arm=Arm(protocol), origins=origins, spki=[spki],
                      host_rules="MAP *.test 127.0.0.1")
    argv = [a for a in command_line(spec) if "extension" not in a]
    argv.append("--remote-debugging-port=0")
    proc = subprocess.Popen(argv, env=scratch_env(os.environ, scratch / "xdg"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        cdp = endpoint(udd, client=client)
        try:
            page = next(t for t in cdp.send("Target.getTargets")["targetInfos"]
                        if t["type"] == "page")
            session = cdp.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                         "flatten": True})["sessionId"]
            yield proc.pid, cdp, session
        finally:
            cdp.close()
    finally:
        stop(proc)


T = TypeVar("T")


def rotated(arms: Sequence[T], rounds: int) -> Iterator[tuple[int, T]]:
    """(round, arm): each round's arms back to back, their order rotated by one each round."""
    for r in range(rounds):
        k = r % len(arms)
        for arm in [*arms[k:], *arms[:k]]:
            yield r, arm


def plain_arm(site: Site, scratch: Path, loads: int) -> dict[str, float]:
    with plain_browser(scratch, site.spki) as (pid, cdp, session):
        sampler = Sampler(pid)
        snaps: list[dict[str, float]] = []
        for _ in range(1 + loads):
            load_page(site, cdp, session, sampler, "plain")
            snaps.append(sampler.sample())
        return per_load(snaps[0], snaps[-1], loads)


def load_page(site: Site, cdp: Cdp, session: str, sampler: Sampler, arm: str) -> None:
    """Navigate to the test page, wait for its beacon in caddy's log and then 0.6 s (the
    recorder's 500 ms quiet and the store's write), sampling the CPU every 0.1 s."""
    offset = site.access_log.stat().st_size
    cdp.send("Page.navigate", {"url": site.origin() + "/page/"}, session)
    deadline = time.monotonic() + 30
    while beacon_after(site.access_log, offset) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no beacon from the {arm} load")
        sampler.sample()
        time.sleep(0.1)
    settle = time.monotonic() + 0.6
    while time.monotonic() < settle:
        sampler.sample()
        time.sleep(0.1)


def recorded_arm(site: Site, scratch: Path, db: Path, extension: Path, loads: int,
                 visual: bool) -> dict[str, float]:
    load_id = str(uuid.uuid4())
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="", extension_dir=str(extension),
                      arm=Arm("h2"), origins=(), spki=[site.spki],
                      host_rules="MAP *.test 127.0.0.1")
    state: dict[str, object] = {"sampler": None, "snaps": {}}

    def done() -> bool:
        sampler = state["sampler"]
        if sampler is None:
            try:
                state["sampler"] = sampler = Sampler(browser_pgid(scratch / "profile", 0.01))
            except RuntimeError:
                return False
        assert isinstance(sampler, Sampler)
        snap = sampler.sample()
        n = len(stored_ids(db, load_id))
        snaps = state["snaps"]
        assert isinstance(snaps, dict)
        snaps.setdefault(n, snap)
        return n >= 1 + loads

    res = run_load(spec, scratch=scratch, db=db, navigate=[site.origin() + "/page/"] * (1 + loads),
                   context={"load_id": load_id}, done=done, visual=visual, timeout_s=120)
    if not res.ok:
        raise RuntimeError(f"recorded loads failed: {res.reason}")
    snaps = state["snaps"]
    assert isinstance(snaps, dict)
    return per_load(snaps[1], snaps[1 + loads], loads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=10, help="K: loads measured per browser")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extension", action="append", metavar="NAME=DIR",
                    help="a built extension as its own arms (default recording=dist)")
    ap.add_argument("--no-visual", action="store_true")
    args = ap.parse_args()
    exts = [(n, Path(p).resolve()) for n, _, p in (e.partition("=") for e in args.extension or
                                                   [f"recording={ROOT / 'dist'}"])]
    arms: list[tuple[str, Path | None, bool]] = [("plain", None, False)]
    for name, ext in exts:
        arms.append((name, ext, False))
        if not args.no_visual:
            arms.append((f"{name}+visual", ext, True))
    got: dict[str, list[dict[str, float]]] = {n: [] for n, _, _ in arms}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with serve_site(work / "site") as site:
            for r, (name, ext, visual) in rotated(arms, args.rounds):
                scratch = work / f"{name}-{r}"
                got[name].append(
                    plain_arm(site, scratch, args.loads) if ext is None else
                    recorded_arm(site, scratch, work / f"{name}-{r}.db", ext, args.loads,
                                 visual))
                print(f"round {r + 1} {name}: " + ", ".join(
                    f"{n} {v:.1f}" for n, v in got[name][-1].items()) + " ms/load",
                    file=sys.stderr, flush=True)
    print_table(got, f"median of {args.rounds} rounds of {args.loads} loads", 22)


def print_table(got: dict[str, list[dict[str, float]]], what: str, width: int) -> None:
    """Per arm, the median ms of CPU per load of each process kind, the total and its extra over
    the ``plain`` arm's."""
    base = statistics.median(sum(x.values()) for x in got["plain"])
    print(f"CPU ms per load ({what}; extra = the arm's total - plain's total)")
    print("arm".ljust(width) + "".join(n.rjust(10) for n in (*KINDS, "total", "extra")))
    for name, xs in got.items():
        med = {n: statistics.median(x[n] for x in xs) for n in KINDS}
        tot = [sum(x.values()) for x in xs]
        print(name.ljust(width) + "".join(f"{med[n]:10.1f}" for n in KINDS) +
              f"{statistics.median(tot):10.1f}{statistics.median(tot) - base:10.1f}"
              f"   (totals {min(tot):.1f}-{max(tot):.1f})")


if __name__ == "__main__":
    main()
