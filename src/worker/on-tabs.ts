/**
 * Worker core handlers for the tabs: which tabs the debugger attaches to (scope, experiment,
 * pause), when an attach is retried at the commit, when a tab is forgotten. Pure.
 */
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
  if (ev.tab.tabId === o.s.labTab) return;
  if (o.s.attaching.has(ev.tab.tabId)) {
    // an attach under way may end after this commit: remembered for its outcome
    o.s = { ...o.s, attaching: new Map(o.s.attaching).set(ev.tab.tabId, ev.tab) };
    return;
  }
  if (o.s.attached.has(ev.tab.tabId)) return;
  if (wanted(o.s, ev.tab.url, ev.tab.incognito, o.now)) o.attach(ev.tab.tabId, true);
}

export function onAttached(o: Out, ev: Ev<"attached">): void {
  const commit = o.s.attaching.get(ev.tabId);
  if (commit === undefined) return;
  o.s = { ...o.s, attaching: unset(o.s.attaching, ev.tabId) };
  // attached after a commit it did not expect: the recorder may have joined that load late
  if (commit !== null) o.emit({ type: "join_commit", tabId: ev.tabId });
}

export function onAttachFailed(o: Out, ev: Ev<"attach_failed">): void {
  const commit = o.s.attaching.get(ev.tabId) ?? null;
  o.forget(ev.tabId);
  // refused before the commit (the tab still showed chrome://newtab): attach at the commit
  if (commit !== null && wanted(o.s, commit.url, commit.incognito, o.now)) o.attach(ev.tabId, true);
}

export function onDetached(o: Out, ev: Ev<"detached">): void {
  o.forget(ev.tabId);
}

export function onRemoved(o: Out, ev: Ev<"removed">): void {
  o.forget(ev.tabId);
  o.s = { ...o.s, idle: without(o.s.idle, ev.tabId) };
}

/** A single-page app changed route in a tab let go idle after its record: attach again, so the
 * same-document navigation gets its record (it misses what came before the attach, and says so). */
export function onHistoryState(o: Out, ev: Ev<"history_state">): void {
  const { tabId, url, incognito } = ev.tab;
  if (!o.s.idle.has(tabId) || o.s.attached.has(tabId) || !wanted(o.s, url, incognito, o.now)) return;
  o.attach(tabId, false, url);
}

/** The lab runner opened its tab: attach to it and keep it attached. */
export function onLabTab(o: Out, ev: Ev<"lab_tab">): void {
  o.s = { ...o.s, labTab: ev.tabId };
  o.attach(ev.tabId);
}
