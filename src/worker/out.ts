/**
 * One step of the worker core under way: the state so far and the effects in order, with the
 * moves several handlers share (attach, detach, flush the outbox, apply the proxy settings,
 * start the lab, react to a pause). Pure.
 */
import { MSG_SCHEMA } from "../messages/protocol.ts";
import { throttling } from "../policy/ruleset.ts";
import { effective } from "../policy/settings.ts";
import { begin, done, merge, type ApplyReason } from "./apply.ts";
import type { Commit } from "../cdp/missed.ts";
import type { Effect } from "./events.ts";
import { paused, plus, unset, without, type WorkerState } from "./state.ts";

/** A mutable builder for one step: the state so far and the effects in order. */
export class Out {
  readonly effects: Effect[] = [];
  constructor(public s: WorkerState, readonly now: number) {}
  emit(...e: Effect[]): void { this.effects.push(...e); }

  /** `seen`: for an attach at the commit, the commit it is made for (and any before it that a
   * refused attach saw): the session is told of them once attached (src/cdp/missed.ts). */
  attach(tabId: number, committed = false, soft: string | null = null, seen: readonly Commit[] = []): void {
    const e = effective(this.s.settings, this.s.lab);
    this.s = {
      ...this.s, attached: plus(this.s.attached, tabId), attaching: new Map(this.s.attaching).set(tabId, null),
      commits: new Map(this.s.commits).set(tabId, seen), idle: without(this.s.idle, tabId),
    };
    this.emit({
      type: "attach", tabId, committed, source: e.source, urlDetail: e.urlDetail, quietMs: e.quietMs, visual: e.visual,
      saveLog: e.saveLog, soft,
    });
  }

  detach(tabId: number, idle = false): void {
    this.forget(tabId);
    if (idle) this.s = { ...this.s, idle: plus(this.s.idle, tabId) };
    this.emit({ type: "detach", tabId });
  }

  /** The tab is neither attached nor attaching (detached, refused, gone). */
  forget(tabId: number): void {
    this.s = {
      ...this.s, attached: without(this.s.attached, tabId), attaching: unset(this.s.attaching, tabId),
      commits: unset(this.s.commits, tabId), held: unset(this.s.held, tabId),
    };
  }

  /** A navigation began in the tab: a hold after its last record no longer lets it go (the new
   * page's record holds it again). */
  unhold(tabId: number): void {
    if (this.s.held.has(tabId)) this.s = { ...this.s, held: unset(this.s.held, tabId) };
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
    this.emit({ type: "lab_start", navigate: lab.navigate, advance: lab.advance, startAtMs: lab.start_at_ms, hold: lab.hold });
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
