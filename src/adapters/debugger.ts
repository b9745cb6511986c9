/**
 * Adapter: chrome.debugger <-> the recorder core, one Recorder per attached tab. Listeners are
 * registered once, before any attach, so nothing sent during Network.enable is lost. Child
 * sessions (OOPIFs) are enabled through {tabId, sessionId} (Chrome 125+). A timer polls each
 * recorder with CDP time mapped from performance.now() (src/cdp/clock.ts).
 */
import type { Protocol } from "devtools-protocol";
import { CdpClock } from "../cdp/clock.ts";
import { CHILD_COMMANDS, LCP_SCRIPT, LCP_WORLD, TAB_COMMANDS, loadMetricsEvent } from "../cdp/enable-commands.ts";
import { eventTime } from "../cdp/from-log.ts";
import { NAV_TIMING_EXPRESSION, navTimingEvent } from "../cdp/late.ts";
import type { RawEvent } from "../cdp/raw-event.ts";
import { Recorder, type RecorderOptions } from "../cdp/recorder.ts";
import type { NavigationRecord } from "../record/types.ts";

const PROTOCOL_VERSION = "1.3";
const POLL_MS = 250;
const CHILD_ATTEMPTS = 3;

/** `busy`: the tab's recorder is already recording its next navigation (the tab is not idle). */
export type RecordSink = (tabId: number, record: NavigationRecord, busy: boolean) => void;

interface TabSession { recorder: Recorder; clock: CdpClock }

export class DebuggerRecorder {
  private readonly tabs = new Map<number, TabSession>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** A detach under way per tab: an attach to the same tab waits for it (Chromium refuses a
   * second session of the same extension on a tab). */
  private readonly detaching = new Map<number, Promise<void>>();

  constructor(private readonly sink: RecordSink) {
    chrome.debugger.onEvent.addListener((source, method, params) => this.onEvent(source, method, params));
    chrome.debugger.onDetach.addListener((source) => {
      if (source.tabId !== undefined) this.finish(source.tabId);
    });
  }

  isAttached(tabId: number): boolean {
    return this.tabs.has(tabId);
  }

  /** Attaches and enables the domains; resolves once the tab is being recorded. `committed`: the
   * attach is for the navigation the tab has just committed (webNavigation.onCommitted), which
   * may have loaded already: then its load event was before the attach, and what is relayed after
   * a load event is relayed now. */
  async attach(tabId: number, options: Omit<RecorderOptions, "mainFrameId">, committed = false): Promise<void> {
    await this.detaching.get(tabId);
    if (this.tabs.has(tabId)) return;
    const targets = await chrome.debugger.getTargets();
    const mainFrameId = targets.find((t) => t.tabId === tabId && t.type === "page")?.id;
    const recorder = new Recorder(mainFrameId === undefined ? options : { ...options, mainFrameId });
    this.tabs.set(tabId, { recorder, clock: new CdpClock() });
    try {
      await chrome.debugger.attach({ tabId }, PROTOCOL_VERSION);
      for (const c of TAB_COMMANDS) await chrome.debugger.sendCommand({ tabId }, c.method, c.params ?? {});
    } catch (e) {
      this.tabs.delete(tabId);
      throw e;
    }
    this.timer ??= setInterval(() => this.pollAll(), POLL_MS);
    const s = this.tabs.get(tabId);
    if (committed && s?.recorder.joinedAfterLoad) await this.relayMetrics(tabId, s);
  }

  /** Emits what is open (as aborted if before load) and detaches. */
  async detach(tabId: number): Promise<void> {
    if (!this.tabs.has(tabId)) return;
    this.finish(tabId);
    const done = chrome.debugger.detach({ tabId }).catch(() => undefined);
    this.detaching.set(tabId, done);
    await done;
    if (this.detaching.get(tabId) === done) this.detaching.delete(tabId);
  }

  private finish(tabId: number): void {
    const s = this.tabs.get(tabId);
    if (s === undefined) return;
    this.tabs.delete(tabId);
    for (const r of s.recorder.flush()) this.sink(tabId, r, false);
    if (this.tabs.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private pollAll(): void {
    const local = performance.now();
    for (const [tabId, s] of this.tabs) {
      const now = s.clock.now(local);
      if (now !== null) for (const r of s.recorder.poll(now)) this.sink(tabId, r, s.recorder.active);
    }
  }

  private onEvent(source: chrome.debugger.DebuggerSession, method: string, params?: object): void {
    const tabId = source.tabId;
    const s = tabId === undefined ? undefined : this.tabs.get(tabId);
    if (tabId === undefined || s === undefined) return;
    // chrome.debugger delivers protocol events; their shape is CDP's (devtools-protocol types)
    const ev = { method, params: params ?? {}, sessionId: source.sessionId } as RawEvent;
    if (ev.sessionId === undefined) delete ev.sessionId;
    const t = eventTime(ev);
    const out: NavigationRecord[] = [];
    if (t !== null) {
      s.clock.observe(t, performance.now());
      out.push(...s.recorder.poll(t));
    }
    // busy after both: an event that completes the last load may be the next one's first
    out.push(...s.recorder.push(ev));
    for (const r of out) this.sink(tabId, r, s.recorder.active);
    if (ev.method === "Target.attachedToTarget") void this.enableChild(tabId, ev.params.sessionId);
    if (ev.method === "Page.loadEventFired" && ev.sessionId === undefined) void this.relayMetrics(tabId, s);
  }

  /** Enables the child's domains, each retried a few times, then resumes it (always: a paused
   * frame would hang the page). A child resumed without Network.enable reports none of its
   * requests' ends: its document would be recorded with 0 bytes and no end. */
  private async enableChild(tabId: number, sessionId: string): Promise<void> {
    for (const c of CHILD_COMMANDS) {
      for (let attempt = 1; ; attempt++) {
        try {
          await chrome.debugger.sendCommand({ tabId, sessionId }, c.method, c.params ?? {});
          break;
        } catch (e) {
          if (attempt >= CHILD_ATTEMPTS || !this.tabs.has(tabId)) {
            console.warn(`protolens: child session ${c.method} failed`, e);
            break;
          }
          await new Promise((r) => setTimeout(r, 20 * attempt));
        }
      }
    }
  }

  private async relayMetrics(tabId: number, s: TabSession): Promise<void> {
    const res = (await chrome.debugger.sendCommand({ tabId }, "Performance.getMetrics", {}).catch(() => null)) as
      | Protocol.Performance.GetMetricsResponse | null;
    if (res && this.tabs.get(tabId) === s) {
      for (const r of s.recorder.push(loadMetricsEvent(res.metrics))) this.sink(tabId, r, s.recorder.active);
    }
    if (this.tabs.get(tabId) === s && s.recorder.wantsNavigationTiming) await this.relayNavigationTiming(tabId, s);
  }

  /** A navigation joined late (src/cdp/late.ts): its document's own Navigation Timing, read in
   * the extension's isolated world, tagged with the main frame's current loader id. */
  private async relayNavigationTiming(tabId: number, s: TabSession): Promise<void> {
    try {
      const { frameTree } = (await chrome.debugger.sendCommand({ tabId }, "Page.getFrameTree", {})) as
        Protocol.Page.GetFrameTreeResponse;
      const world = (await chrome.debugger.sendCommand({ tabId }, "Page.createIsolatedWorld",
        { frameId: frameTree.frame.id, worldName: LCP_WORLD })) as Protocol.Page.CreateIsolatedWorldResponse;
      const res = (await chrome.debugger.sendCommand({ tabId }, "Runtime.evaluate", {
        expression: NAV_TIMING_EXPRESSION, contextId: world.executionContextId, returnByValue: true,
      })) as Protocol.Runtime.EvaluateResponse;
      const value: unknown = res.result.value;
      if (typeof value === "string" && this.tabs.get(tabId) === s) {
        for (const r of s.recorder.push(navTimingEvent(frameTree.frame.loaderId, value))) this.sink(tabId, r, s.recorder.active);
      }
      // a document created before the attach never ran the LCP observer (TAB_COMMANDS): start it
      // now; `buffered` replays its earlier candidates
      await chrome.debugger.sendCommand({ tabId }, "Runtime.evaluate",
        { expression: LCP_SCRIPT, contextId: world.executionContextId });
    } catch (e) {
      console.warn("protolens: navigation timing", e);
    }
  }
}
