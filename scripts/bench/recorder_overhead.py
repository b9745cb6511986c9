#!/usr/bin/env python3
"""Benchmark (a) of issue 2: does recording slow pages down?

Loads the test site (tests/site) in headless Chromium, interleaved: with the ProtoLens extension
recording (lab mode, host storing into SQLite) and with no extension at all. Both PLTs come from
the same independent source: the page's own loadEventEnd, which the page reports to caddy (its
late request's ?led= query), so the two arms are measured identically. Prints the medians and
their ratio (recording / none).

    .venv/bin/python scripts/bench/recorder_overhead.py [--loads 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.browser.flags import LaunchSpec, command_line  # noqa: E402
from protolens.browser.launch import run_load, scratch_env, stop  # noqa: E402
from tests.e2e.caddylog import read_hits  # noqa: E402
from tests.site.site import serve_site  # noqa: E402

STARTUP_MS = 1500


def beacon_after(log: Path, offset: int) -> float | None:
    for hit in read_hits(log, offset):
        if hit.uri.startswith("/page/data/late.json?"):
            return float(parse_qs(urlsplit(hit.uri).query)["led"][0])
    return None


def plain_load(site: object, scratch: Path, timeout: float = 60) -> float:
    """No extension: Chromium opens the page from a script after startup; wait for the beacon."""
    spec = LaunchSpec(chromium="/usr/bin/chromium", user_data_dir=str(scratch / "profile"),
                      extension_dir="", arm="h2", origins=(), spki=[site.spki],  # type: ignore[attr-defined]
                      host_rules="MAP *.test 127.0.0.1")
    argv = [a for a in command_line(spec) if "extension" not in a][:-1]
    # Navigate 1.5 s after start, as the recorded arm does (it waits for the extension's hello):
    # a page loaded while the browser is still starting up is slower, which would flatter the
    # extension.
    target = site.origin() + "/page/"  # type: ignore[attr-defined]
    argv.append(f"data:text/html,<script>setTimeout(()=>location.href='{target}',{STARTUP_MS})"
                "</script>")
    offset = site.access_log.stat().st_size  # type: ignore[attr-defined]
    proc = subprocess.Popen(argv, env=scratch_env(os.environ, scratch / "xdg"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            led = beacon_after(site.access_log, offset)  # type: ignore[attr-defined]
            if led is not None:
                return led
            time.sleep(0.05)
        raise RuntimeError("no beacon from the plain load")
    finally:
        stop(proc)


def recorded_load(site: object, scratch: Path, db: Path) -> float:
    import uuid
    load_id = str(uuid.uuid4())
    offset = site.access_log.stat().st_size  # type: ignore[attr-defined]
    spec = LaunchSpec(chromium="/usr/bin/chromium", user_data_dir="",
                      extension_dir=str(ROOT / "dist"), arm="h2", origins=(),
                      spki=[site.spki], host_rules="MAP *.test 127.0.0.1")  # type: ignore[attr-defined]
    from tests.e2e.harness import stored_ids
    res = run_load(spec, scratch=scratch, db=db, navigate=[site.origin() + "/page/"],  # type: ignore[attr-defined]
                   context={"load_id": load_id}, done=lambda: bool(stored_ids(db, load_id)))
    if not res.ok:
        raise RuntimeError(f"recorded load failed: {res.reason}")
    led = beacon_after(site.access_log, offset)  # type: ignore[attr-defined]
    if led is None:
        raise RuntimeError("no beacon from the recorded load")
    return led


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=20, help="loads per arm (default 20)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "bench.db"
        with serve_site(work / "site") as site:
            plain: list[float] = []
            recorded: list[float] = []
            for i in range(args.loads):
                # interleaved, alternating which goes first, so drift hits both arms alike
                order = [("plain", plain), ("rec", recorded)]
                for name, sink in order if i % 2 == 0 else order[::-1]:
                    scratch = work / f"{name}-{i}"
                    value = plain_load(site, scratch) if name == "plain" else \
                        recorded_load(site, scratch, db)
                    sink.append(value)
                print(f"load {i + 1}/{args.loads}: plain {plain[-1]:.1f} ms, "
                      f"recording {recorded[-1]:.1f} ms", file=sys.stderr)
    mp, mr = statistics.median(plain), statistics.median(recorded)
    print(f"median PLT without extension: {mp:.1f} ms (n={len(plain)})")
    print(f"median PLT while recording:   {mr:.1f} ms (n={len(recorded)})")
    print(f"ratio recording / none: {mr / mp:.3f}")


if __name__ == "__main__":
    main()
