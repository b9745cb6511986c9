/**
 * Page and Target domain handlers: which frames are the tab's children, when the navigation's
 * document commits, and its milestones (lifecycle events, load, DOMContentLoaded), all in CDP
 * monotonic time and only for the tab's own main frame; the navigations that load no document
 * (a same-document navigation by the History API, a back/forward-cache restore), and downloads.
 */
import { Navigation } from "../navigation.ts";
import type { EventOf } from "../raw-event.ts";
import { ORPHAN_WINDOW_S, type TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

export function onFrameAttached(s: TabState, ev: EventOf<"Page.frameAttached">): Out {
  if (ev.params.parentFrameId) s.childFrames.add(ev.params.frameId);
  return [];
}

export function onAttachedToTarget(s: TabState, ev: EventOf<"Target.attachedToTarget">): Out {
  if (ev.params.targetInfo.type === "iframe") s.childFrames.add(ev.params.targetInfo.targetId);
  return [];
}

export function onFrameNavigated(s: TabState, ev: EventOf<"Page.frameNavigated">): Out {
  const f = ev.params.frame;
  if (f.parentId) {
    s.childFrames.add(f.id);
    return [];
  }
  if (ev.sessionId !== undefined) return [];
  s.mainFrameId ??= f.id;
  if (f.id !== s.mainFrameId) return [];
  s.documentLoaderId = f.loaderId;
  s.documentUrl = f.url + (f.urlFragment ?? "");
  if (ev.params.type === "BackForwardCacheRestore") return startWithoutDocument(s, "bfcache", f.url, f.loaderId);
  const out = s.pending?.loaderId === f.loaderId ? s.commitPending() : [];
  if (s.nav && f.loaderId === s.nav.loaderId) s.commit(s.nav);
  return out;
}

/** A navigation that loads no document: it starts now (the event has no time of its own: the
 * recorder's latest CDP time), or at the first of the requests that came just before it with no
 * navigation to take them; it ends the one before it and is placed on the wall clock by the
 * tab's last request (or, when none came before, its next one). A same-document navigation while
 * the document is still loading is part of that load (a single-page app settling its first
 * route), not a navigation of its own. */
function startWithoutDocument(s: TabState, kind: "soft" | "bfcache", url: string, loaderId: string): Out {
  const now = s.now;
  if (now === null) return [];
  if (kind === "soft" && s.nav !== null && s.nav.kind === "navigation" && s.nav.settled === null) return [];
  const out = s.finish(true);
  const adopted = s.takeOrphans(now - ORPHAN_WINDOW_S);
  const t0 = Math.min(now, ...[...adopted.values()].map((hops) => hops[0]?.start ?? now));
  const wall = s.wallOffset === null ? NaN : t0 + s.wallOffset;
  const nav = new Navigation(t0, wall, loaderId, s.mainFrameId ?? "", `|${kind}@${t0}`, null, kind, url);
  for (const [k, hops] of adopted) {
    nav.requests.set(k, hops);
    for (const h of hops) nav.touch(h.end ?? h.responseAt ?? h.start);
  }
  s.begin(nav, true);
  return out;
}

export function onNavigatedWithinDocument(s: TabState, ev: EventOf<"Page.navigatedWithinDocument">): Out {
  const p = ev.params;
  if (ev.sessionId !== undefined || p.frameId !== s.mainFrameId) return [];
  // joined late (everyday: the attach came after the commit), no frameNavigated was seen: the
  // document's URL is its main request's (the real-web /state/, 2026-11-29: without it the page's
  // own replaceState keeping its URL began a soft record, which took the page's next image)
  const before = s.documentUrl ?? (s.nav === null ? null : s.nav.current(s.nav.mainKey)?.url ?? null);
  s.documentUrl = p.url;
  // a fragment (#anchor) scrolls; only the History API (pushState, replaceState, traversal) is
  // how single-page apps change route, and only when the URL changes: a call that keeps it (a
  // router writing its state into the entry once hydrated, scroll restoration) is no navigation
  if (p.navigationType !== "historyApi" || p.url === before) return [];
  // the document's loader, when seen (a replayed log may begin at this event: its requests then
  // go to it whatever their loader, as every request of a committed navigation does)
  return startWithoutDocument(s, "soft", p.url, s.documentLoaderId ?? s.nav?.loaderId ?? "");
}

/** A service worker's version going through its lifecycle (ServiceWorker domain, optional:
 * enable-commands.ts OPTIONAL_COMMANDS) while a navigation is recorded: installing, it fetches
 * its script and precache on its own target, which the tab is not attached to. */
export function onWorkerVersionUpdated(s: TabState, ev: EventOf<"ServiceWorker.workerVersionUpdated">): Out {
  const nav = s.nav ?? s.pending;
  const busy = ev.params.versions.some((v) => v.status !== "activated" && v.status !== "redundant");
  if (nav !== null && ev.sessionId === undefined && busy) nav.declare("service_worker_fetches");
  return [];
}

/** A download: a navigation to it never commits (the document stays), so the pending
 * navigation for its URL (or a first navigation that never committed) makes no record; the
 * download is counted on the document that started it. */
export function onDownloadWillBegin(s: TabState, ev: EventOf<"Page.downloadWillBegin">): Out {
  if (ev.sessionId !== undefined) return [];
  const url = ev.params.url;
  const mainUrl = (n: typeof s.nav): string | undefined => n?.current(n.mainKey)?.url;
  if (s.pending !== null && mainUrl(s.pending) === url) s.markDownload(s.pending);
  else if (s.nav !== null && !s.committed && mainUrl(s.nav) === url) s.markDownload(s.nav);
  else if (s.nav !== null) s.nav.downloadUrls.add(url); // by script, a link with `download`, or counted already
  return [];
}

/** A JavaScript dialog opened (alert, confirm, prompt, beforeunload; in any frame of the tab, on
 * any session): the page's script, and with it the load, waits until the dialog is closed, by the
 * user or (in the lab, src/cdp/session.ts) at once. One opened before the shown page's load event
 * makes its record incomplete (`dialog`): its load time holds the time the dialog stayed open
 * (the real-web /dialog/, closed after 1.5 s: load_ms 1,534 for a page that loads in about 60). The
 * event has no time of its own; before the load event or after it is all that is asked. A dialog
 * already open when the recorder attached is not reported (Chromium 156): such a record says only
 * that it was joined late. */
export function onJavascriptDialogOpening(s: TabState): Out {
  if (s.nav !== null && s.nav.loadAt === null) s.nav.dialogBeforeLoad = true;
  return [];
}

export function onLifecycleEvent(s: TabState, ev: EventOf<"Page.lifecycleEvent">): Out {
  const p = ev.params;
  // the pending navigation's first lifecycle event is its commit (`init`; frameNavigated follows)
  const out = ev.sessionId === undefined && p.frameId === s.mainFrameId && s.pending?.loaderId === p.loaderId
    ? s.commitPending() : [];
  return [...out, ...milestone(s, ev)];
}

function milestone(s: TabState, ev: EventOf<"Page.lifecycleEvent">): Out {
  const p = ev.params;
  const nav = s.nav;
  if (!nav && ev.sessionId === undefined && p.name === "commit" && p.frameId === s.mainFrameId) {
    // attached after the commit: the replayed commit is all there is of its start (late.ts)
    s.begin(new Navigation(p.timestamp, NaN, p.loaderId, p.frameId, `|${p.loaderId}`, "commit"), true);
    return [];
  }
  if (!nav || nav.kind !== "navigation" || ev.sessionId !== undefined || p.loaderId !== nav.loaderId ||
      p.frameId !== s.mainFrameId) return [];
  // joined at the response and enabled after the commit: no frameNavigated, only this replay,
  // which may come after requests the new document made (a speculation rule's prefetch). A
  // navigation seen from its request whose frameNavigated came before Page.enable took effect
  // (everyday: the attach at a navigation races it; the real-web script redirect's landing page,
  // 2026-11-29) has committed once any lifecycle event of its document comes: the replayed commit,
  // or, when the replay had none, its DOMContentLoaded. So has one joined at its response whose
  // replay had no commit (everyday, two browsers on the two cores, 2026-11-30: /sw/'s lifecycle
  // events began at its DOMContentLoaded, and its LCP and service worker, reported through the
  // binding, were dropped as not yet committed): its commit came after its document's response
  if (nav.late !== null && p.name === "commit") s.commit(nav, p.timestamp);
  else if (!s.committed) {
    const response = nav.late !== null ? nav.current(nav.mainKey)?.responseAt ?? null : null;
    s.commit(nav, response === null ? p.timestamp : Math.min(p.timestamp, response));
  }
  // the new document's first lifecycle event is its commit: `init` (`commit` only in the
  // replay at enable, verified with Chromium 156's fixtures)
  if (p.name === "init" || p.name === "commit") s.commitAt ??= p.timestamp;
  if (p.name === "load") nav.loadAt ??= p.timestamp;
  else if (p.name === "DOMContentLoaded") nav.dclAt ??= p.timestamp;
  else if (p.name === "firstContentfulPaint") nav.fcpAt ??= p.timestamp;
  return [];
}

/** The main frame stopped loading: after its load event (as every load ends) nothing changes;
 * before it, the load was stopped and no load event will come (measured with Chromium 156: after
 * window.stop() or Page.stopLoading on a page with an object the server never finished, only
 * this event). The event has no time of its own: the recorder's latest CDP time. */
export function onFrameStoppedLoading(s: TabState, ev: EventOf<"Page.frameStoppedLoading">): Out {
  const nav = s.nav;
  if (nav?.kind !== "navigation" || ev.sessionId !== undefined || ev.params.frameId !== s.mainFrameId || !s.committed ||
      nav.loadAt !== null || nav.mainFailure !== null || s.now === null) return [];
  nav.stoppedAt ??= s.now;
  return [];
}

export function onLoadEventFired(s: TabState, ev: EventOf<"Page.loadEventFired">): Out {
  if (s.nav?.kind === "navigation" && s.committed && ev.sessionId === undefined) s.nav.loadAt ??= ev.params.timestamp;
  return [];
}

export function onDomContentEventFired(s: TabState, ev: EventOf<"Page.domContentEventFired">): Out {
  if (s.nav?.kind === "navigation" && s.committed && ev.sessionId === undefined) s.nav.dclAt ??= ev.params.timestamp;
  return [];
}
