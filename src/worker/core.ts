/**
 * The worker core: every decision of the service worker, pure (STYLE.md rule zero).
 * `step(state, event, now)` -> `{state, effects}`; `now` is epoch ms. It decides which tabs the
 * debugger attaches to (scope, experiment, pause) and when it lets go (a tab idle after its
 * record, issue 14 §5), which arm is in effect per enrolled domain (src/worker/apply.ts), what goes
 * to the host and when (outbox flush, retries after a retryable error), and the lab's start.
 * The adapter (src/adapters/service-worker.ts) runs the effects; tests/extension/worker-core.test.ts
 * drives it with events.
 */
import { advance, enrolledDomain, type ArmInEffect, type ExperimentState } from "../experiment/assign.ts";
import { MSG_SCHEMA, type HostMsg, type LabConfig } from "../messages/protocol.ts";
import { ack, enqueue, reject, type OutboxState } from "../outbox/outbox.ts";
import { annotate } from "../policy/applied.ts";
import { NO_POLICIES, throttling, type PolicySet } from "../policy/ruleset.ts";
import { effective, inScope, type Settings } from "../policy/settings.ts";
import { IDLE_APPLY, begin, done, merge, type ApplyReason, type ApplyState } from "./apply.ts";
import type { Effect, TabInfo, WorkerEvent } from "./events.ts";
import { expired, isPaused, type Pause } from "./pause.ts";

/** A retryable host error: the record is sent again after this long. */
export const RETRY_MS = 2000;
/** The lab's first URL waits this long at most for the host's policies (a host that sends none). */
export const LAB_WAIT_MS = 2000;

export interface WorkerState {
  settings: Settings;
  lab: LabConfig | null;
  experiment: ExperimentState | null;
  pause: Pause | null;
  policies: PolicySet;
  /** What the proxy settings apply to each enrolled domain, and since when. */
  inEffect: ReadonlyMap<string, ArmInEffect>;
  askedRelay: boolean;
  /** Between the host's hello and the port's close. */
  hostReady: boolean;
  outbox: OutboxState;
  /** Records sent and not yet answered. */
  inflight: ReadonlySet<string>;
  /** Tabs the debugger is attached to (or attaching). */
  attached: ReadonlySet<number>;
  /** Tabs whose attach is under way, with the commit seen meanwhile (null: none yet). An attach
   * started at onBeforeNavigate may end after the commit: it fails (the tab still showed
   * chrome://newtab) and is retried as a commit attach, or it succeeds and joins the commit. */
  attaching: ReadonlyMap<number, TabInfo | null>;
  /** Tabs let go once idle after a record: attached again at their next navigation. */
  idle: ReadonlySet<number>;
  labTab: number | null;
  labStart: "none" | "waiting" | "started";
  apply: ApplyState;
  /** The first-run page: to open once we know this is not a lab profile. */
  welcome: "none" | "pending" | "done";
}

export function initialState(settings: Settings, experiment: ExperimentState | null, pause: Pause | null, outbox: OutboxState): WorkerState {
  return {
    settings, lab: null, experiment, pause, policies: NO_POLICIES, inEffect: new Map(), askedRelay: false,
    hostReady: false, outbox, inflight: new Set(), attached: new Set(), attaching: new Map(), idle: new Set(), labTab: null,
    labStart: "none", apply: IDLE_APPLY, welcome: "none",
  };
}

export interface Step { state: WorkerState; effects: Effect[] }

const without = <T>(s: ReadonlySet<T>, x: T): Set<T> => { const n = new Set(s); n.delete(x); return n; };
const plus = <T>(s: ReadonlySet<T>, x: T): Set<T> => new Set(s).add(x);
const unset = <K, V>(m: ReadonlyMap<K, V>, k: K): Map<K, V> => { const n = new Map(m); n.delete(k); return n; };

/** Recording off for the user's browsing (a lab profile is the host's to switch). */
export function paused(s: WorkerState, now: number): boolean {
  return s.lab === null && isPaused(s.pause, now);
}

/** Should the debugger be attached to a tab showing `url`? */
export function wanted(s: WorkerState, url: string, incognito: boolean, now: number): boolean {
  if (paused(s, now)) return false;
  if (inScope(effective(s.settings, s.lab), url, incognito)) return true;
  if (s.lab !== null || incognito || s.experiment === null) return false;
  try {
    const u = new URL(url);
    return (u.protocol === "https:" || u.protocol === "http:") && enrolledDomain(s.experiment, u.hostname) !== null;
  } catch {
    return false;
  }
}

/** A mutable builder for one step: the state so far and the effects in order. */
class Out {
  readonly effects: Effect[] = [];
  constructor(public s: WorkerState, readonly now: number) {}
  emit(...e: Effect[]): void { this.effects.push(...e); }

  attach(tabId: number, committed = false): void {
    const e = effective(this.s.settings, this.s.lab);
    this.s = {
      ...this.s, attached: plus(this.s.attached, tabId), attaching: new Map(this.s.attaching).set(tabId, null),
      idle: without(this.s.idle, tabId),
    };
    this.emit({ type: "attach", tabId, committed, source: e.source, urlDetail: e.urlDetail, quietMs: e.quietMs, visual: e.visual });
  }

  detach(tabId: number, idle = false): void {
    this.forget(tabId);
    if (idle) this.s = { ...this.s, idle: plus(this.s.idle, tabId) };
    this.emit({ type: "detach", tabId });
  }

  /** The tab is neither attached nor attaching (detached, refused, gone). */
  forget(tabId: number): void {
    this.s = { ...this.s, attached: without(this.s.attached, tabId), attaching: unset(this.s.attaching, tabId) };
  }

  /** Sends every waiting record not already on its way. */
  flush(): void {
    if (!this.s.hostReady) return;
    const inflight = new Set(this.s.inflight);
    for (const item of this.s.outbox.items) {
      if (inflight.has(item.msgId)) continue;
      inflight.add(item.msgId);
      this.emit({ type: "send", msg: { type: "record", schema: MSG_SCHEMA, msg_id: item.msgId, record: item.record } });
    }
    this.s = { ...this.s, inflight };
  }

  requestApply(reason: ApplyReason): void {
    if (this.s.apply.running !== null) {
      this.s = { ...this.s, apply: { ...this.s.apply, next: merge(this.s.apply.next, reason) } };
    } else {
      this.beginApply(reason);
    }
  }

  private beginApply(reason: ApplyReason): void {
    const exp = this.s.lab === null ? this.s.experiment : null;
    if (this.s.policies.relay === null && (exp?.domains.length ?? 0) > 0 && !this.s.askedRelay && this.s.hostReady) {
      this.emit({ type: "send", msg: { type: "policies", schema: MSG_SCHEMA, want_relay: true } });
      this.s = { ...this.s, askedRelay: true };
    }
    const { app, inEffect } = begin(reason, this.s.policies, exp, this.s.inEffect, this.now);
    this.s = { ...this.s, inEffect, apply: { running: app, next: null } };
    this.emit({ type: "apply_proxy", rules: app.rules, relay: this.s.policies.relay });
  }

  applied(pac: boolean | null): void {
    const app = this.s.apply.running;
    if (app === null) return;
    const next = this.s.apply.next;
    this.s = { ...this.s, inEffect: done(app, pac, this.s.inEffect, this.now), apply: { running: null, next: null } };
    this.emit({ type: "throttle", throttling: throttling(app.rules), tabs: [...this.s.attached] });
    if (app.lab) this.startLab();
    if (app.sync) this.emit({ type: "query_tabs" });
    if (next !== null) this.beginApply(next);
  }

  startLab(): void {
    const lab = this.s.lab;
    if (this.s.labStart !== "waiting" || lab === null) return;
    this.s = { ...this.s, labStart: "started" };
    this.emit({ type: "lab_start", navigate: lab.navigate, advance: lab.advance });
  }

  /** Lets go of every tab but the lab's (a pause), or attaches what is now in scope. */
  pauseChanged(): void {
    if (paused(this.s, this.now)) {
      for (const t of this.s.attached) if (t !== this.s.labTab) this.detach(t);
      const until = this.s.pause?.until ?? null;
      this.emit({ type: "badge", paused: true, until });
      if (until !== null) this.emit({ type: "timer", ms: until - this.now, event: { type: "tick" } });
    } else {
      this.emit({ type: "badge", paused: false, until: null }, { type: "query_tabs" });
    }
  }

  openWelcomeOnce(lab: boolean): void {
    if (this.s.welcome !== "pending") return;
    this.s = { ...this.s, welcome: "done" };
    if (!lab) this.emit({ type: "open_welcome" });
  }
}

export function step(state: WorkerState, ev: WorkerEvent, now: number): Step {
  const o = new Out(state, now);
  if (expired(o.s.pause, now)) {
    o.s = { ...o.s, pause: null };
    o.emit({ type: "save_pause", pause: null });
    if (ev.type !== "start") o.pauseChanged();
  }
  handle(o, ev);
  return { state: o.s, effects: o.effects };
}

function handle(o: Out, ev: WorkerEvent): void {
  switch (ev.type) {
    case "start":
      o.pauseChanged();
      return;
    case "settings":
      o.s = { ...o.s, settings: ev.settings };
      o.emit({ type: "query_tabs" });
      return;
    case "experiment":
      o.s = { ...o.s, experiment: ev.experiment };
      o.requestApply({ sync: true, lab: false });
      return;
    case "pause":
      o.s = { ...o.s, pause: ev.pause };
      o.pauseChanged();
      return;
    case "tick":
      return;
    case "installed":
      o.s = { ...o.s, welcome: "pending" };
      if (o.s.hostReady) o.openWelcomeOnce(o.s.lab !== null);
      return;
    case "host":
      onHost(o, ev.msg);
      return;
    case "host_down":
      o.s = { ...o.s, hostReady: false, inflight: new Set() };
      // no host (not installed yet): the first-run page says how to install it
      o.openWelcomeOnce(false);
      return;
    case "send_failed":
      o.s = { ...o.s, inflight: without(o.s.inflight, ev.msgId) };
      return;
    case "retry":
      o.s = { ...o.s, inflight: without(o.s.inflight, ev.msgId) };
      o.flush();
      return;
    case "tabs":
      for (const t of ev.tabs) syncTab(o, t);
      return;
    case "before_navigate": {
      const { tabId, url, incognito } = ev.tab;
      o.s = { ...o.s, idle: without(o.s.idle, tabId) };
      const want = wanted(o.s, url, incognito, o.now);
      if (want && !o.s.attached.has(tabId)) o.attach(tabId);
      else if (!want && o.s.attached.has(tabId) && tabId !== o.s.labTab) o.detach(tabId);
      return;
    }
    case "created":
      if (ev.tab.tabId === o.s.labTab || o.s.attached.has(ev.tab.tabId)) return;
      if (wanted(o.s, ev.tab.url, ev.tab.incognito, o.now)) o.attach(ev.tab.tabId);
      return;
    case "committed":
      // a tab that could not be attached before its navigation (chrome://newtab): attach at
      // the commit; the recorder joins the load under way (src/cdp/late.ts, "commit")
      if (ev.tab.tabId === o.s.labTab) return;
      if (o.s.attaching.has(ev.tab.tabId)) {
        // an attach under way may end after this commit: remembered for its outcome
        o.s = { ...o.s, attaching: new Map(o.s.attaching).set(ev.tab.tabId, ev.tab) };
        return;
      }
      if (o.s.attached.has(ev.tab.tabId)) return;
      if (wanted(o.s, ev.tab.url, ev.tab.incognito, o.now)) o.attach(ev.tab.tabId, true);
      return;
    case "attached": {
      const commit = o.s.attaching.get(ev.tabId);
      if (commit === undefined) return;
      o.s = { ...o.s, attaching: unset(o.s.attaching, ev.tabId) };
      // attached after a commit it did not expect: the recorder may have joined that load late
      if (commit !== null) o.emit({ type: "join_commit", tabId: ev.tabId });
      return;
    }
    case "attach_failed": {
      const commit = o.s.attaching.get(ev.tabId) ?? null;
      o.forget(ev.tabId);
      // refused before the commit (the tab still showed chrome://newtab): attach at the commit
      if (commit !== null && wanted(o.s, commit.url, commit.incognito, o.now)) o.attach(ev.tabId, true);
      return;
    }
    case "detached":
      o.forget(ev.tabId);
      return;
    case "removed":
      o.forget(ev.tabId);
      o.s = { ...o.s, idle: without(o.s.idle, ev.tabId) };
      return;
    case "record":
      onRecord(o, ev);
      return;
    case "proxy_applied":
      o.applied(ev.pac);
      return;
    case "lab_tab":
      o.s = { ...o.s, labTab: ev.tabId };
      o.attach(ev.tabId);
      return;
    case "lab_timeout":
      o.startLab();
      return;
  }
}

/** Attach to an in-scope tab ahead of its next navigation (attaching at onBeforeNavigate can be
 * too late for its first request), unless it was let go idle; detach from the rest. */
function syncTab(o: Out, t: TabInfo): void {
  if (t.tabId === o.s.labTab) return;
  const want = wanted(o.s, t.url, t.incognito, o.now);
  const on = o.s.attached.has(t.tabId);
  if (want && !on && !o.s.idle.has(t.tabId)) o.attach(t.tabId);
  else if (!want && on) o.detach(t.tabId);
}

function onHost(o: Out, m: HostMsg): void {
  switch (m.type) {
    case "hello":
      o.s = { ...o.s, lab: m.lab, hostReady: true, askedRelay: false };
      o.emit({ type: "save_host", lab: m.lab, hostVersion: m.host_version });
      o.flush();
      o.openWelcomeOnce(m.lab !== null);
      if (m.lab?.record && o.s.labStart === "none") {
        // the host's policies message follows its hello: the first lab URL waits for the PAC
        // and the throttling rules, at most LAB_WAIT_MS
        o.s = { ...o.s, labStart: "waiting" };
        o.emit({ type: "timer", ms: LAB_WAIT_MS, event: { type: "lab_timeout" } });
      }
      return;
    case "ack":
      o.s = { ...o.s, inflight: without(o.s.inflight, m.msg_id), outbox: ack(o.s.outbox, m.msg_id) };
      o.emit({ type: "save_outbox", outbox: o.s.outbox }, { type: "lab_ack", id: m.id });
      return;
    case "policies":
      o.s = { ...o.s, policies: { rules: m.rules, relay: m.relay }, askedRelay: m.relay !== null ? false : o.s.askedRelay };
      o.requestApply({ sync: false, lab: true });
      return;
    case "error": {
      if (m.msg_id === null) return;
      o.s = { ...o.s, outbox: reject(o.s.outbox, m.msg_id, m.retry) };
      o.emit({ type: "save_outbox", outbox: o.s.outbox });
      if (m.retry) o.emit({ type: "timer", ms: RETRY_MS, event: { type: "retry", msgId: m.msg_id } });
      else o.s = { ...o.s, inflight: without(o.s.inflight, m.msg_id) };
      return;
    }
    case "pong":
    case "query_result": // only the dashboard's own port sends queries
    case "contribute_status": // only the options page and popup ask (their own port)
      return;
  }
}

function onRecord(o: Out, ev: WorkerEvent & { type: "record" }): void {
  const s = o.s;
  const { record, enrolled } = annotate(ev.record, s.policies, s.experiment, s.lab !== null, ev.applied, ev.installed, s.inEffect);
  // a tab idle after its record is let go: the "started debugging" infobar goes with the last
  // session (issue 14 §5); the next navigation attaches again (src/cdp/late.ts)
  const letGo = s.lab === null && !ev.busy && s.attached.has(ev.tabId) && ev.tabId !== s.labTab;
  const keep = !paused(s, o.now) &&
    // attached only for the experiment (recording off) but not an experiment load: not recorded
    (record.source === "experiment" || inScope(effective(s.settings, s.lab), ev.record.page.origin, false));
  if (keep) {
    if (enrolled !== null && s.experiment !== null) {
      // the next navigation to this domain gets the next arm of its block (experiment/assign.ts)
      o.s = { ...o.s, experiment: advance(s.experiment, enrolled) };
      o.emit({ type: "save_experiment", experiment: o.s.experiment });
    }
    o.emit({ type: "lab_record", tabId: ev.tabId, record });
    o.s = { ...o.s, outbox: enqueue(o.s.outbox, record) };
    o.emit({ type: "save_outbox", outbox: o.s.outbox });
    o.flush();
    o.emit({ type: "lab_queued", record }, { type: "show_record", tabId: ev.tabId, record });
  }
  if (letGo) o.detach(ev.tabId, true);
}
