"""cdp_source_cpu.py's ``--via debugger`` arms: the same DevTools sources through
``chrome.debugger``, the recorder's path, in a minimal extension written here (no ProtoLens code).
Its service worker attaches to the tab, enables the arm's domains, navigates 1 + K + 1 times,
each 0.9 s after the load event, and for ``trace`` reads the blob back and parses it with
JSON.parse before the next navigation; ``plain`` is attached with Page only (for the load
event). The CPU snapshots are taken at the beacons of loads 2 and 2 + K: K whole cycles, each
load's reading-back included.

``commands`` (cdp_domain_cpu.py): the tab's commands in order instead of an arm's domains, and
``children``, sent to each auto-attached child session (which waits for the debugger until the
last of them, as the recorder's do: src/cdp/enable-commands.ts CHILD_COMMANDS); a screencast's
frames are acknowledged, as the recorder does, so that it goes on; a refusal of an ``optional``
command is let pass, as the recorder lets its OPTIONAL_COMMANDS' pass."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec, command_line
from protolens.browser.launch import scratch_env, stop
from protolens.browser.profile import seed_preferences
from scripts.bench.recorder_cpu import Sampler, per_load
from scripts.bench.recorder_overhead import BEACON
from scripts.devkit.caddylog import read_hits
from scripts.devkit.harness import CHROMIUM
from scripts.devkit.site import Site

LIVE = {"plain": ("Page.enable",), "network": ("Network.enable", "Page.enable", "Runtime.enable"),
        "trace": ("Page.enable",)}
"""The domains each arm enables live, with lifecycle events but for ``plain``; cdp_source_cpu.py's
client arms enable the same, ``plain`` nothing (the client needs no load event) and ``both``
the Network arm's."""

EXTENSION_JS = """
const CONFIG = __CONFIG__;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// bytes: the least work a recorder does with either source (summed, not reported)
let waiter = null, complete = null, bytes = 0;
chrome.debugger.onEvent.addListener((src, method, params) => {
  if (method === "Network.loadingFinished") bytes += params.encodedDataLength;
  if (method === "Page.screencastFrame")
    chrome.debugger.sendCommand(src, "Page.screencastFrameAck", { sessionId: params.sessionId });
  if (method === "Target.attachedToTarget" && CONFIG.children.length) {
    const child = { tabId: src.tabId, sessionId: params.sessionId };
    (async () => {
      for (const [m, p] of CONFIG.children)
        await chrome.debugger.sendCommand(child, m, p).catch(() => undefined);
    })();
  }
  if (method === "Page.loadEventFired" && waiter) { const w = waiter; waiter = null; w(); }
  if (method === "Tracing.tracingComplete" && complete) {
    const c = complete; complete = null; c(params);
  }
});
async function run() {
  const [tab] = await chrome.tabs.query({});
  const target = { tabId: tab.id };
  const send = (m, p) => chrome.debugger.sendCommand(target, m, p || {});
  await chrome.debugger.attach(target, "1.3");
  for (const [m, p] of CONFIG.commands)
    await (CONFIG.optional.includes(m) ? send(m, p).catch(() => undefined) : send(m, p));
  for (let i = 0; i < CONFIG.loads; i++) {
    if (CONFIG.arm === "trace")
      await send("Tracing.start", { traceConfig: { includedCategories: ["devtools.timeline"],
        recordMode: "recordUntilFull" }, transferMode: "ReturnAsStream" });
    const loaded = new Promise((r) => { waiter = r; });
    await send("Page.navigate", { url: CONFIG.url });
    await loaded;
    await sleep(900);
    if (CONFIG.arm === "trace") {
      const done = new Promise((r) => { complete = r; });
      await send("Tracing.end");
      const { stream } = await done;
      let text = "";
      for (;;) {
        const r = await send("IO.read", { handle: stream, size: 1 << 20 });
        text += r.data;
        if (r.eof) break;
      }
      await send("IO.close", { handle: stream });
      const doc = JSON.parse(text);
      const evs = Array.isArray(doc) ? doc : doc.traceEvents;
      bytes = evs.filter((e) => e.name === "ResourceFinish")
        .reduce((n, e) => n + (e.args.data.encodedDataLength || 0), 0);
    }
  }
}
run();
"""


Command = tuple[str, dict[str, Any]]


def arm_commands(arm: str) -> list[Command]:
    """An arm's LIVE domains, then lifecycle events but for ``plain``."""
    lifecycle = [] if arm == "plain" else [("Page.setLifecycleEventsEnabled", {"enabled": True})]
    return [(m, {}) for m in LIVE[arm]] + lifecycle


def write_extension(where: Path, arm: str, url: str, loads: int,
                    commands: list[Command] | None = None,
                    children: list[Command] | None = None,
                    optional: Sequence[str] = ()) -> Path:
    where.mkdir(parents=True)
    (where / "manifest.json").write_text(json.dumps({
        "manifest_version": 3, "name": "cdp-source-bench", "version": "1",
        "permissions": ["debugger", "tabs"], "background": {"service_worker": "bg.js"}}))
    (where / "bg.js").write_text(EXTENSION_JS.replace("__CONFIG__", json.dumps(
        {"arm": arm, "url": url, "loads": loads,
         "commands": arm_commands(arm) if commands is None else commands,
         "children": children or [], "optional": list(optional)})))
    return where


def run_via_debugger(site: Site, scratch: Path, arm: str, loads: int,
                     commands: list[Command] | None = None,
                     children: list[Command] | None = None,
                     optional: Sequence[str] = ()) -> tuple[dict[str, float], str]:
    """One browser, the bench extension driving 1 + K + 1 loads; CPU between the beacons of
    loads 2 and 2 + K."""
    udd = scratch / "profile"
    seed_preferences(udd)
    ext = write_extension(scratch / "ext", arm, site.origin() + "/page/", loads + 2, commands,
                          children, optional)
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd), extension_dir=str(ext),
                      arm=Arm("h2"), origins=(), spki=[site.spki],
                      host_rules="MAP *.test 127.0.0.1")
    offset = site.access_log.stat().st_size
    proc = subprocess.Popen(command_line(spec), env=scratch_env(os.environ, scratch / "xdg"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        sampler = Sampler(proc.pid)
        snaps: dict[int, dict[str, float]] = {}
        deadline = time.monotonic() + 30 + 5 * loads
        while len(snaps) < 2:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {arm} extension's loads did not all come")
            n = beacons(site.access_log, offset)
            snap = sampler.sample()
            if n in (2, 2 + loads):
                snaps.setdefault(n, snap)
            time.sleep(0.05)
        got = beacons(site.access_log, offset)
        return per_load(snaps[2], snaps[2 + loads], loads), f"{got} beacons"
    finally:
        stop(proc)


def beacons(log: Path, offset: int) -> int:
    """Beacons (the page's request after its load event) in caddy's log since ``offset``."""
    return sum(1 for hit in read_hits(log, offset) if hit.uri.startswith(BEACON))
