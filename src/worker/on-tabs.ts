/**
 * Worker core handlers for the tabs: which tabs the debugger attaches to (scope, experiment,
 * pause), when an attach is retried at the commit, when a tab is forgotten. Pure.
 */
import type { Commit } from "../cdp/missed.ts";
import type { WorkerEvent, TabInfo } from "./events.ts";
import type { Out } from "./out.ts";
import { unset, wanted, without } from "./state.ts";

type Ev<T extends WorkerEvent["type"]> = Extract<WorkerEvent, { type: T }>;

/** Attach to an in-scope tab ahead of its next navigation (attaching at onBeforeNavigate can be
 * too late for its first request), unless it was let go idle; detach from the rest. */
function syncTab(o: Out, t: TabInfo): void {
  if (t.tabId === o.s.labTab) return;
  const want = wanted(o.s, t.url, t.incognito, o.now);
  const on = o.s.attached.has(t.tabId);
  if (want && !on && !o.s.idle.has(t.tabId)) o.attach(t.tabId);
  else if (!want && on) o.detach(t.tabId);
}

export function onTabs(o: Out, ev: Ev<"tabs">): void {
  for (const t of ev.tabs) syncTab(o, t);
}

export function onBeforeNavigate(o: Out, ev: Ev<"before_navigate">): void {
  const { tabId, url, incognito } = ev.tab;
  o.s = { ...o.s, idle: without(o.s.idle, tabId) };
  o.unhold(tabId);
  if (ev.at !== undefined) o.s = { ...o.s, starts: new Map(o.s.starts).set(tabId, { url, at: ev.at }) };
  const want = wanted(o.s, url, incognito, o.now);
  if (want && !o.s.attached.has(tabId)) o.attach(tabId);
  else if (!want && o.s.attached.has(tabId) && tabId !== o.s.labTab) o.detach(tabId);
}

export function onCreated(o: Out, ev: Ev<"created">): void {
  if (ev.tab.tabId === o.s.labTab || o.s.attached.has(ev.tab.tabId)) return;
  if (wanted(o.s, ev.tab.url, ev.tab.incognito, o.now)) o.attach(ev.tab.tabId);
}

/** A tab that could not be attached before its navigation (chrome://newtab): attach at the
 * commit; the recorder joins the load under way (src/cdp/late.ts, "commit"). */
export function onCommitted(o: Out, ev: Ev<"committed">): void {
  const { tabId } = ev.tab;
  if (tabId === o.s.labTab) return;
  o.unhold(tabId);
  o.s = { ...o.s, shown: new Map(o.s.shown).set(tabId, ev.tab.url) };
  const start = o.s.starts.get(tabId);
  // a prerendered document shown: its record is of its own kind (src/cdp/missed.ts)
  const prerendered = o.s.prerendered.get(tabId) ?? [];
  const activation = ev.documentId !== undefined && prerendered.includes(ev.documentId);
  if (activation) o.s = { ...o.s, prerendered: new Map(o.s.prerendered).set(tabId, prerendered.filter((d) => d !== ev.documentId)) };
  const commit: Commit = {
    url: ev.tab.url, at: ev.at, ...(start?.url === ev.tab.url ? { startedAt: start.at } : {}), ...(activation ? { activation } : {}),
  };
  // in scope; a back/forward navigation can be a restore from the back/forward cache, whose
  // record (kind "bfcache") takes no commit (src/cdp/missed.ts): it would be left as missed
  const candidate = !ev.backForward && wanted(o.s, ev.tab.url, ev.tab.incognito, o.now);
  if (o.s.attaching.has(tabId)) {
    // an attach under way may end after this commit: remembered for its outcome, and handed to
    // the session if in scope (a document committed and left before the attach is done has no
    // events of its own)
    const before = o.s.commits.get(tabId) ?? [];
    const seen = candidate ? [...before, commit] : before;
    o.s = { ...o.s, attaching: new Map(o.s.attaching).set(tabId, ev.tab), commits: new Map(o.s.commits).set(tabId, seen) };
    return;
  }
  if (o.s.attached.has(tabId)) {
    // the session checks it against its records: a document that committed while its domains
    // were being enabled can be left before the recorder sees it, whenever the commit is reported
    if (candidate) o.emit({ type: "expect_commits", tabId, commits: [commit] });
    return;
  }
  if (wanted(o.s, ev.tab.url, ev.tab.incognito, o.now)) o.attach(tabId, true, null, [commit]);
}

/** Prerendered documents kept per tab, the latest first kept: chosen by ProtoLens to keep the
 * worker's state small (the real-web /prerender/ pages prerender one page; Chromium also caps how
 * many prerenders a page may hold at once). An activation of one dropped from the list gets a
 * `missed` record, as every activation did before 2026-11-29. */
const MAX_PRERENDERED = 8;

/** A document committed in the tab's prerendering frame: remembered for its activation. */
export function onPrerendered(o: Out, ev: Ev<"prerendered">): void {
  const known = o.s.prerendered.get(ev.tabId) ?? [];
  if (known.includes(ev.documentId)) return;
  o.s = { ...o.s, prerendered: new Map(o.s.prerendered).set(ev.tabId, [...known, ev.documentId].slice(-MAX_PRERENDERED)) };
}

export function onAttached(o: Out, ev: Ev<"attached">): void {
  const commit = o.s.attaching.get(ev.tabId);
  if (commit === undefined) return;
  const commits = o.s.commits.get(ev.tabId) ?? [];
  o.s = { ...o.s, attaching: unset(o.s.attaching, ev.tabId), commits: unset(o.s.commits, ev.tabId) };
  if (commits.length > 0) o.emit({ type: "expect_commits", tabId: ev.tabId, commits: [...commits] });
  // attached after a commit it did not expect: the recorder may have joined that load late
  if (commit !== null) o.emit({ type: "join_commit", tabId: ev.tabId });
}

export function onAttachFailed(o: Out, ev: Ev<"attach_failed">): void {
  const commit = o.s.attaching.get(ev.tabId) ?? null;
  const seen = o.s.commits.get(ev.tabId) ?? [];
  o.forget(ev.tabId);
  // refused before the commit (the tab still showed chrome://newtab): attach at the commit
  if (commit !== null && wanted(o.s, commit.url, commit.incognito, o.now)) o.attach(ev.tabId, true, null, seen);
}

export function onDetached(o: Out, ev: Ev<"detached">): void {
  o.forget(ev.tabId);
}

export function onRemoved(o: Out, ev: Ev<"removed">): void {
  o.forget(ev.tabId);
  o.s = {
    ...o.s, idle: without(o.s.idle, ev.tabId), starts: unset(o.s.starts, ev.tabId), prerendered: unset(o.s.prerendered, ev.tabId),
    shown: unset(o.s.shown, ev.tabId),
  };
}

/** A single-page app changed route in a tab let go idle after its record: attach again, so the
 * same-document navigation gets its record (it misses what came before the attach, and says so).
 * A call that keeps the URL (a router's state, scroll restoration) is no route change: no attach
 * (until 2026-11-29 it attached, and the next request began a soft record of the same URL). */
export function onHistoryState(o: Out, ev: Ev<"history_state">): void {
  const { tabId, url, incognito } = ev.tab;
  const was = o.s.shown.get(tabId);
  o.s = { ...o.s, shown: new Map(o.s.shown).set(tabId, url) };
  if (was === url) return;
  o.unhold(tabId);
  if (!o.s.idle.has(tabId) || o.s.attached.has(tabId) || !wanted(o.s, url, incognito, o.now)) return;
  o.attach(tabId, false, url);
}

/** The lab runner opened its tab: attach to it and keep it attached. */
export function onLabTab(o: Out, ev: Ev<"lab_tab">): void {
  o.s = { ...o.s, labTab: ev.tabId };
  o.attach(ev.tabId);
}
