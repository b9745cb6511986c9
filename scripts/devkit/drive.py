"""One lab browser, driven page by page: the real-web e2e tests' harness (tests only).

A lab Chromium (the built extension, the host in lab mode storing into ``db``) opens its lab tab
on the first URL (docs/MESSAGES.md "Lab mode": the tab is attached before it navigates and never
let go); the test then drives that same tab over DevTools (``--remote-debugging-port=0``): a
navigation, a script, history.back(), Page.stopLoading, and waits for the records each step
makes. So every page of an arm costs one browser start, and a page that makes two records (a
redirect by script, a soft navigation) does not race the lab's navigate list, which moves on at
the first record. Chromium's NetLog (``--log-net-log``, capture mode Default: sockets and their
byte counts, no payloads) is written to ``netlog`` for the wire witness (devkit/netlog.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from protolens.arms import parse_lab_arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.profile import register_lab_host, seed_preferences, write_lab_context
from protolens.lab.store_watch import stored_navigation_ids
from scripts.devkit.cdp import (
    EXTENSION,
    Cdp,
    Page,
    close_browser,
    devtools_browser,
    evaluate,
    launch_devtools,
    wait_for,
)
from scripts.devkit.everyday import extension_spec, switch_recording_on, wait_first_run_page
from scripts.devkit.harness import CHROMIUM, SITE_QUIET_MS, require_dist


@dataclass
class Step:
    """What one step of a driven browser made."""

    name: str
    started: float
    """Wall clock (epoch s) when the step began: caddy's log is sliced by it."""
    ended: float = 0.0
    ids: list[str] = field(default_factory=list)
    """The records stored during the step, in the order the host stored them."""
    timed_out: bool = False
    """No record came within the step's time: the tab was sent to ``Driven.idle_url`` (which
    replaces the load under way: its record, and the idle page's, are this step's, not the
    next one's)."""


@dataclass
class Driven:
    cdp: Cdp
    session: str
    """A DevTools session of this test's own on the lab tab (the extension has its own)."""
    db: Path
    load_id: str | None
    """The lab load's id (its records' tag); None in an everyday browser: every record counts."""
    netlog: Path
    steps: list[Step] = field(default_factory=list)
    target: str = ""
    """The tab's target id (an everyday browser's test tab; "" in a lab browser)."""
    idle_url: str = "about:blank"
    """Where a step that timed out sends the tab: an http page, so the recorder ends the load
    it left (about:blank is not a navigation the recorder follows)."""

    def ids(self) -> list[str]:
        if self.load_id is None:
            return everyday_ids(self.db)
        return stored_navigation_ids(self.db, self.load_id)

    def js(self, expr: str) -> Any:
        return evaluate(self.cdp, self.session, expr)

    def step(self, name: str, action: Any, expect: int, timeout_s: float = 20.0,
             settle_s: float = 0.0) -> Step:
        """Run ``action()`` (e.g. ``lambda: d.navigate(url)``) and wait until ``expect`` more
        records are stored (then ``settle_s`` more, for records that may follow)."""
        before = set(self.ids())
        step = Step(name=name, started=time.time())
        action()
        try:
            wait_for(f"{expect} record(s) of {name}",
                     lambda: len(set(self.ids()) - before) >= expect, timeout_s)
            time.sleep(settle_s)
        except AssertionError:
            step.timed_out = True
            self.navigate(self.idle_url)
            with contextlib.suppress(AssertionError):  # the load left behind and the idle page
                wait_for(f"the records after {name} timed out",
                         lambda: len(set(self.ids()) - before) >= expect + 1, 30)
        step.ended = time.time()
        step.ids = [i for i in self.ids() if i not in before]
        self.steps.append(step)
        return step

    def navigate(self, url: str) -> None:
        self.cdp.send("Page.navigate", {"url": url}, self.session)


def everyday_ids(db: Path) -> list[str]:
    """Every stored record's id, in the order the host stored them (none before the store)."""
    if not db.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return [r[0] for r in conn.execute(
                "SELECT id FROM navigations ORDER BY ingested_at_ms, rowid")]
    except sqlite3.OperationalError:  # the host has not created the schema yet
        return []


@contextmanager
def driven_everyday(work: Path, *, spki: str, db: Path, preloading: bool = False,
                    hold_s: int = 0) -> Iterator[Driven]:
    """An everyday browser (scripts/devkit/everyday.py: recording switched on from the options
    page, h2, a tab held ``hold_s`` seconds after its record) with one tab of this test's own on
    about:blank; steps navigate that tab. With ``preloading``, Chromium's default preloading is on
    (everyday.extension_spec)."""
    spec = replace(extension_spec(work, db=db, extra=[f"--log-net-log={work / 'netlog.json'}",
                                                        "--net-log-capture-mode=Default"],
                                  preloading=preloading),
                   spki=[spki], host_rules="MAP *.test 127.0.0.1")
    with devtools_browser(spec, work) as (cdp, _log):
        wait_first_run_page(cdp)
        switch_recording_on(Page(cdp, f"{EXTENSION}/options.html", 800, 900), hold_s=hold_s)
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = str(cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
                      ["sessionId"])
        yield Driven(cdp=cdp, session=session, db=db, load_id=None,
                     netlog=work / "netlog.json", target=target)


def show(db: Path, nav_id: str) -> dict[str, Any]:
    """The stored record as ``protolens show --json`` prints it (the product's own reader)."""
    out = subprocess.run([sys.executable, "-m", "protolens.cli", "show", nav_id, "--json"],
                         env={**os.environ, "PROTOLENS_DB": str(db)}, capture_output=True,
                         text=True, check=True)
    return dict(json.loads(out.stdout))


@contextmanager
def driven_lab(work: Path, *, arm: str, first_url: str, spki: str, quic_origins: list[str],
               db: Path, quiet_ms: int = SITE_QUIET_MS, extra: Sequence[str] = (),
               save_log: bool = False) -> Iterator[Driven]:
    """A lab browser under ``arm`` whose lab tab loads ``first_url``; yields once that load is
    stored (``Driven.steps[0]``), stops the browser on exit (the NetLog is complete then)."""
    work.mkdir(parents=True, exist_ok=True)
    udd = work / "profile"
    seed_preferences(udd)
    load_id = str(uuid.uuid4())
    ctx = write_lab_context(work / "lab-context.json", navigate=[first_url],
                            context={"load_id": load_id, "arm": arm}, quiet_ms=quiet_ms,
                            save_log=save_log)
    register_lab_host(udd, {"PROTOLENS_DB": str(db), "PROTOLENS_LAB_CONTEXT": str(ctx)})
    netlog = work / "netlog.json"
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd), extension_dir=str(require_dist()),
                      arm=parse_lab_arm(arm), origins=quic_origins, spki=[spki],
                      host_rules="MAP *.test 127.0.0.1",
                      extra=["--remote-debugging-port=0", f"--log-net-log={netlog}",
                             "--net-log-capture-mode=Default", *extra])
    started = time.time()
    proc, cdp, _log = launch_devtools(spec, work)
    try:
        target = wait_for("the lab tab", lambda: next(
            (t["targetId"] for t in cdp.send("Target.getTargets")["targetInfos"]
             if t["type"] == "page" and t["url"].startswith(first_url)), None))
        session = str(cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
                      ["sessionId"])
        driven = Driven(cdp=cdp, session=session, db=db, load_id=load_id, netlog=netlog)
        wait_for("the first record", lambda: len(driven.ids()) >= 1, 45)
        driven.steps.append(Step(name="first", started=started, ended=time.time(),
                                 ids=driven.ids()))
        yield driven
    finally:
        close_browser(proc, cdp)
