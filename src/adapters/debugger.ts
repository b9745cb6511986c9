/**
 * Adapter: chrome.debugger <-> the session core (src/cdp/session.ts), one TabSession per
 * attached tab. Listeners are registered once, before any attach, so nothing sent during
 * Network.enable is lost. Child sessions (OOPIFs) are addressed through {tabId, sessionId}
 * (Chrome 125+). A timer polls each session with CDP time mapped from performance.now()
 * (src/cdp/clock.ts).
 */
import { CdpClock } from "../cdp/clock.ts";
import { monotonicTime } from "../cdp/event-clock.ts";
import type { RawEvent } from "../cdp/raw-event.ts";
import type { RecorderOptions } from "../cdp/recorder.ts";
import type { Commit } from "../cdp/missed.ts";
import { TabSession, runFlow, type Flow } from "../cdp/session.ts";
import type { NavigationRecord } from "../record/types.ts";
import { LogTap, type TappedLog } from "../replay/log-tap.ts";
import type { ReplayOptions } from "../replay/replay.ts";
import { frameHistogram } from "./frame-decode.ts";

const PROTOCOL_VERSION = "1.3";
/** A record completes at the first poll after its quiet ends (src/cdp/navigation.ts), so a poll
 * every 250 ms made a lab load 125 ms longer on average (scripts/bench/lab_overhead.py); a poll is a
 * walk over the open tabs' requests. */
const POLL_MS = 50;

/** `busy`: the tab's recorder is already recording its next navigation (the tab is not idle). */
export type RecordSink = (tabId: number, record: NavigationRecord, busy: boolean) => void;
/** The log tap's logs (src/adapters/log-sender.ts), with the recorder's options. */
export type LogSink = (log: TappedLog, options: ReplayOptions) => void;

interface Tab { session: TabSession; clock: CdpClock; tap: { tap: LogTap; options: ReplayOptions } | null }

export class DebuggerRecorder {
  private readonly tabs = new Map<number, Tab>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** A detach under way per tab: an attach to the same tab waits for it (Chromium refuses a
   * second session of the same extension on a tab). */
  private readonly detaching = new Map<number, Promise<void>>();

  constructor(private readonly sink: RecordSink, private readonly logSink: LogSink = () => undefined) {
    chrome.debugger.onEvent.addListener((source, method, params) => this.onEvent(source, method, params));
    chrome.debugger.onDetach.addListener((source) => {
      if (source.tabId !== undefined) this.finish(source.tabId);
    });
  }

  isAttached(tabId: number): boolean {
    return this.tabs.has(tabId);
  }

  /** Attaches and enables the domains; resolves once the tab is being recorded. `committed`: the
   * attach is for the navigation the tab has just committed (webNavigation.onCommitted). */
  async attach(tabId: number, options: Omit<RecorderOptions, "mainFrameId">, committed = false, saveLog = false): Promise<void> {
    await this.detaching.get(tabId);
    if (this.tabs.has(tabId)) return;
    const targets = await chrome.debugger.getTargets();
    const mainFrameId = targets.find((t) => t.tabId === tabId && t.type === "page")?.id;
    // the log tap sees every event the session feeds its recorder, and the recorder's state then
    const tap = saveLog ? { tap: new LogTap(mainFrameId), options: replayOptions(options, mainFrameId) } : null;
    const session: TabSession = new TabSession(mainFrameId === undefined ? options : { ...options, mainFrameId },
      tap === null ? undefined : (ev) => tap.tap.event(ev, session.recorder.active));
    const tab: Tab = { session, clock: new CdpClock(), tap };
    this.tabs.set(tabId, tab);
    try {
      await chrome.debugger.attach({ tabId }, PROTOCOL_VERSION);
      await this.run(tabId, tab.session.enable(), true);
    } catch (e) {
      this.tabs.delete(tabId);
      throw e;
    }
    this.wake();
    await this.run(tabId, tab.session.afterAttach(committed));
  }

  /** The attach ended after the tab's commit: the load it joined may be over already. */
  async joinCommit(tabId: number): Promise<void> {
    const t = this.tabs.get(tabId);
    if (t !== undefined) await this.run(tabId, t.session.afterAttach(true));
  }

  /** Top-frame commits webNavigation reported for the tab (src/cdp/missed.ts). */
  expectCommits(tabId: number, commits: readonly Commit[]): void {
    this.tabs.get(tabId)?.session.expectCommits(commits);
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

  private run(tabId: number, flow: Flow, rethrow = false): Promise<void> {
    this.wake();
    const done = runFlow(flow, {
      send: (method, params, sessionId) => chrome.debugger.sendCommand(
        sessionId === undefined ? { tabId } : { tabId, sessionId }, method, params),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      decode: frameHistogram,
      records: (records, busy) => this.handOut(tabId, records, busy),
    });
    // a flow that began a navigation after the last poll stopped the timer: poll again
    void done.then(() => this.wake(), () => this.wake());
    return rethrow ? done : done.catch((e: unknown) => console.warn("protolens: debugger session", e));
  }

  private finish(tabId: number): void {
    const t = this.tabs.get(tabId);
    if (t === undefined) return;
    this.tabs.delete(tabId);
    this.handOut(tabId, t.session.close(), false, t);
    if (this.tabs.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Polls every attached tab while one of them records a navigation; when none does (a tab held
   * after its record), the timer stops until the next event or flow (`wake`): 20 polls a second
   * cost a held tab's worker about 13 ms of CPU a second (docs/RECORD.md "Late attach"). */
  private pollAll(): void {
    const local = performance.now();
    let active = false;
    for (const [tabId, t] of this.tabs) {
      const now = t.clock.now(local);
      if (now !== null) this.handOut(tabId, t.session.poll(now), t.session.recorder.active);
      active ||= t.session.recorder.active;
    }
    if (!active && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Polls again (at least once) while a tab is attached: an event or a flow may have begun a
   * navigation. */
  private wake(): void {
    if (this.tabs.size > 0) this.timer ??= setInterval(() => this.pollAll(), POLL_MS);
  }

  /** Records to the sink; with the log tap on, each one's log to the log sink. */
  private handOut(tabId: number, records: NavigationRecord[], busy: boolean, t = this.tabs.get(tabId)): void {
    for (const r of records) this.sink(tabId, r, busy);
    if (t?.tap) {
      for (const log of t.tap.tap.records(records, busy)) this.logSink(log, log.joined === true ? { ...t.tap.options, joined: true } : t.tap.options);
    }
  }

  private onEvent(source: chrome.debugger.DebuggerSession, method: string, params?: object): void {
    const tabId = source.tabId;
    const t = tabId === undefined ? undefined : this.tabs.get(tabId);
    if (tabId === undefined || t === undefined) return;
    // chrome.debugger delivers protocol events; their shape is CDP's (devtools-protocol types)
    const ev = { method, params: params ?? {}, sessionId: source.sessionId } as RawEvent;
    if (ev.sessionId === undefined) delete ev.sessionId;
    const local = performance.now();
    const time = monotonicTime(ev);
    if (time !== null) t.clock.observe(time, local);
    void this.run(tabId, t.session.onEvent(ev, t.clock.now(local)));
  }
}

/** What the recorder is given, as the log message carries it (src/replay/replay.ts). */
function replayOptions(o: Omit<RecorderOptions, "mainFrameId">, mainFrameId: string | undefined): ReplayOptions {
  return {
    source: o.source, url_detail: o.urlDetail, visual: o.visual === true, quiet_ms: o.limits?.quietMs ?? null,
    env: o.env, ...(mainFrameId === undefined ? {} : { main_frame_id: mainFrameId }),
  };
}
