"""A browser as a user has it, for the e2e tests and the benchmarks that drive the extension over
DevTools: a fresh profile with the built extension, the real host registered as an everyday
install (no lab context) and recording switched on from the options page."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.profile import register_lab_host, seed_preferences
from scripts.devkit.cdp import EXTENSION, Cdp, Page, devtools_browser, wait_for
from scripts.devkit.harness import CHROMIUM, require_dist
from scripts.devkit.site import Site, serve_site


def extension_spec(work: Path, *, db: Path | None = None, env: Mapping[str, str] | None = None,
                   site: Site | None = None, arm: Arm | None = None,
                   origins: Sequence[str] = (), headless: bool = True,
                   extra: Sequence[str] = (), preloading: bool = False) -> LaunchSpec:
    """A fresh profile ``work/profile`` with the built extension and ``--remote-debugging-port=0``
    (for ``devtools_browser``), under ``arm`` (h2 by default).

    With ``db``, the real host is registered for the profile as an everyday install (no
    ``PROTOLENS_LAB_CONTEXT``) storing into ``db``, ``env`` added to its environment; without,
    no host answers. With ``site``, its certificate is trusted and ``*.test`` maps to it. With
    ``preloading``, the profile keeps Chromium's default preloading (a user's: speculation rules,
    prefetch, preconnect) instead of the lab's off."""
    udd = work / "profile"
    prefs = seed_preferences(udd)
    if preloading:
        prefs.write_text("{}")
    if db is not None:
        register_lab_host(udd, {"PROTOLENS_DB": str(db), **(env or {})})
    return LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd),
                      extension_dir=str(require_dist()), arm=arm or Arm("h2"),
                      origins=list(origins), spki=[site.spki] if site else [],
                      host_rules="MAP *.test 127.0.0.1" if site else None, headless=headless,
                      extra=["--remote-debugging-port=0", *extra])


def wait_first_run_page(cdp: Cdp) -> list[dict[str, object]]:
    """Wait until the first-run page a fresh profile opens once (host or no host) is up; return
    its targets. Drive other pages only after it: coming up later, it would hide them, and a
    hidden page makes no frames (captures hang, clicks are lost)."""
    found: list[dict[str, object]] = wait_for("the first-run page", lambda: [
        t for t in cdp.send("Target.getTargets")["targetInfos"]
        if t["url"] == f"{EXTENSION}/welcome.html"])
    return found


DEFAULT_HOLD_S = 30
"""The options page's default hold of a tab after its record (src/policy/settings.ts
DEFAULT_HOLD_S; tests/devkit/test_everyday_hold.py holds the two equal)."""


def switch_recording_on(options: Page, detail: str = "full", hold_s: int = 0) -> None:
    """On the options page, as a user: recording on (all sites), URLs kept at ``detail``, a tab
    held ``hold_s`` seconds after its record (the options' default is 30; 0 here, so that every
    navigation after a record attaches again and joins late, the path the everyday tests were
    written for; tests/e2e/test_everyday_e2e.py tests the hold), Save."""
    # the page's script has run (and bound Save) once it has filled this in
    options.wait("document.getElementById('exp-status').textContent")
    options.js("document.getElementById('save-log').checked = true; true")
    options.js("document.getElementById('enabled').checked = true;"
               f" document.getElementById('detail').value = {detail!r};"
               f" document.getElementById('hold').value = '{int(hold_s)}';"
               " document.getElementById('save').click(); true")
    status = options.wait("document.getElementById('status').textContent")
    if status != "Saved.":
        raise AssertionError(f"the options page said {status!r}, not 'Saved.'")


@contextmanager
def recording_browser(work: Path) -> Iterator[tuple[Cdp, Site, Path]]:
    """The test site, and an everyday browser with recording switched on (all sites, full URLs):
    yields (cdp, site, the host's store ``work/store.db``); stops both on exit."""
    db = work / "store.db"
    with serve_site(work / "site") as site, \
            devtools_browser(extension_spec(work, db=db, site=site), work) as (cdp, _):
        switch_recording_on(Page(cdp, f"{EXTENSION}/options.html", 800, 900))
        yield cdp, site, db
