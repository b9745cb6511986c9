/**
 * The per-tab DevTools session core: the choreography around the recorder, pure and shared by
 * the extension's chrome.debugger adapter (src/adapters/debugger.ts) and the fixture recorder
 * (scripts/record-fixtures.ts), so a fixture records exactly what the extension sees:
 * - the tab's enable commands, in order (src/cdp/enable-commands.ts TAB_COMMANDS);
 * - each auto-attached child session (OOPIF) enabled, each command retried a few times, then
 *   resumed (always: a paused frame would hang the page);
 * - after the main frame's load event, Performance.getMetrics relayed as the recorder's
 *   Performance.metrics event, and for a navigation joined late (src/cdp/late.ts) the page's own
 *   Navigation Timing, read in the extension's isolated world;
 * - with visual metrics on, the screencast (enable-commands.ts SCREENCAST): each frame is
 *   acknowledged at once (Chromium sends the next one only then), decoded by the caller into a
 *   colour histogram and relayed as the recorder's ProtoLens.frameHistogram event; the frame's
 *   JPEG never reaches the recorder or a fixture.
 * - in a lab tab, a JavaScript dialog closed as it opens (no one is there to close it);
 * - the top-frame commits webNavigation reports (`expectCommits`): a document committed and left
 *   before the recorder saw it gets a record of its own (src/cdp/missed.ts).
 * Each of these is a Flow: a generator that yields what to do (send a command, sleep, hand out
 * records) and receives the outcome, so tests/extension/session.test.ts steps it with chosen replies.
 * `runFlow` drives one with the caller's I/O. Events from the tab's own target carry no
 * sessionId; a command without one goes to the tab's own target.
 */
import type { Protocol } from "devtools-protocol";
import {
  CHILD_COMMANDS, LCP_SCRIPT, LCP_WORLD, OPTIONAL_COMMANDS, SCREENCAST, TAB_COMMANDS, loadMetricsEvent,
} from "./enable-commands.ts";
import { monotonicTime } from "./event-clock.ts";
import { MissedCommits, type Commit } from "./missed.ts";
import { NAV_TIMING_EXPRESSION, navTimingEvent } from "./late.ts";
import { FRAME_EVENT, POLL_EVENT, type EventOf, type RawEvent } from "./raw-event.ts";
import { Recorder, type RecorderOptions } from "./recorder.ts";
import type { NavigationRecord } from "../record/types.ts";

/** Attempts per child-session command (a child can refuse a command while it starts up). */
export const CHILD_ATTEMPTS = 3;
/** Child commands a kind of target refuses for want of the domain: a dedicated worker has no Page
 * domain (Chromium 156 answers -32601 "'Page.enable' wasn't found"), and the refusal was retried
 * while the worker stayed paused: its runIfWaitingForDebugger came 82 ms after its attach (the
 * real-web /workers/ in an everyday browser), so recording started a page's worker that much
 * later. */
const NOT_FOR: Readonly<Record<string, ReadonlySet<string>>> = { worker: new Set(["Page.enable"]) };
/** The n-th retry waits n times this long. */
export const CHILD_RETRY_MS = 20;
/** After starting the screencast, wait this long at most (in steps of FIRST_FRAME_STEP_MS) for
 * its first frame, the screen before any navigation the attach precedes (a lab tab's about:blank):
 * a load whose commit comes before it has no start screen (src/visual/metrics.ts). Measured: the
 * first frame is shown 7-12 ms after Page.startScreencast (Chromium 156, headless). */
export const FIRST_FRAME_WAIT_MS = 300;
export const FIRST_FRAME_STEP_MS = 10;
/** Between navigations (a tab held after its record) a frame only says what the next one starts
 * from, so one is decoded only once no newer frame came for this long: a page animating while no
 * load is recorded costs acknowledgements, not decodes. ProtoLens's choice: longer than the
 * frames' spacing of an animation of 4 changes a second or more (the real-web /anim/ banner
 * changes every 100 ms), and far shorter than the everyday quiet (2 s) that a record of the next
 * navigation lasts at least: frames are placed by their display time, so one decoded late still
 * counts as the screen that navigation starts from. */
export const IDLE_FRAME_MS = 250;

export type Io =
  | { kind: "send"; method: string; params: object; sessionId?: string }
  | { kind: "sleep"; ms: number }
  /** Decode a screencast frame (base64 JPEG) into its histogram (src/visual/histogram.ts). */
  | { kind: "decode"; jpeg: string }
  /** Records the recorder completed; `busy`: it is already recording the next navigation. */
  | { kind: "records"; records: NavigationRecord[]; busy: boolean };

/** The outcome of a `send` or a `decode` (the others get `undefined`). */
export type Reply = { ok: true; result: unknown } | { ok: false; error: string } | undefined;

export type Flow = Generator<Io, void, Reply>;

export class SessionError extends Error {}

function* send(method: string, params: object, sessionId?: string): Generator<Io, Reply, Reply> {
  return yield sessionId === undefined ? { kind: "send", method, params } : { kind: "send", method, params, sessionId };
}

export class TabSession {
  readonly recorder: Recorder;
  private readonly missed: MissedCommits;
  private closed = false;
  /** Child sessions (auto-attached out-of-process iframes) -> their frame id (the target's). */
  private readonly frames = new Map<string, string>();

  private readonly visual: boolean;
  /** A lab tab: no one is there to close a JavaScript dialog (see onEvent). */
  private readonly lab: boolean;
  /** A screencast frame has been relayed. */
  private framed = false;
  /** Screencast frames seen while no navigation was being recorded (IDLE_FRAME_MS). */
  private idleFrames = 0;
  /** The loader of the navigation under way when the attach's enables were done, not yet shown
   * committed then: its document may have been made before the LCP script was added, which no
   * event says (an everyday landing page's log, 2026-11-29: no frameNavigated, no commit, no LCP). */
  private underWayAtEnable: string | null = null;
  private readonly log: (ev: RawEvent) => void;
  /** A log is kept (the log tap): timer polls that complete a record are logged too. */
  private readonly logged: boolean;

  /** `log`: every event the recorder is fed, the relayed ones too (a fixture's lines). */
  constructor(options: RecorderOptions, log?: (ev: RawEvent) => void) {
    this.log = log ?? ((): undefined => undefined);
    this.logged = log !== undefined;
    this.recorder = new Recorder(options);
    this.missed = new MissedCommits(options, (id) => this.recorder.fullUrl(id));
    this.visual = options.visual === true;
    this.lab = options.source === "lab";
  }

  /** The tab's enable commands in order; a refusal ends the flow with a SessionError. The
   * optional ones, then the screencast, may be refused: the record then goes without what they
   * give (the screencast: visual metrics). */
  *enable(): Flow {
    for (const c of TAB_COMMANDS) {
      const r = yield* send(c.method, c.params ?? {});
      if (!r?.ok) throw new SessionError(`${c.method}: ${r?.ok === false ? r.error : "no reply"}`);
    }
    for (const c of OPTIONAL_COMMANDS) yield* send(c.method, c.params ?? {});
    if (!this.visual) return;
    const r = yield* send(SCREENCAST.method, SCREENCAST.params ?? {});
    for (let waited = 0; r?.ok && !this.framed && !this.closed && waited < FIRST_FRAME_WAIT_MS; waited += FIRST_FRAME_STEP_MS) {
      yield { kind: "sleep", ms: FIRST_FRAME_STEP_MS };
    }
  }

  /** After an attach at the commit (webNavigation.onCommitted): a document that has loaded
   * already had its load event before the attach, so its relay runs now. */
  *afterAttach(committed: boolean): Flow {
    if (committed && this.recorder.joinedAfterLoad) yield* this.relayMetrics();
    // still loading: its Navigation Timing now as well, so a document left before its load (a
    // redirect by script) is still recorded; the relay after load completes it
    else if (committed && this.recorder.wantsNavigationTiming) yield* this.relayNavigationTiming();
    // seen from its request, committed before the enables were all done: its paint timing and
    // the LCP observer now (the paint may have come before the lifecycle events were on)
    else if (this.recorder.committedDuringEnable) yield* this.relayNavigationTiming();
    // under way, its commit not seen: at its load, if no LCP candidate came by then
    else this.underWayAtEnable = this.recorder.underWay;
  }

  /** Top-frame commits webNavigation reported for the tab (those seen while the attach was under
   * way, or one since): those the recorder never sees get records of their own, handed out with
   * the next records or at the close (src/cdp/missed.ts). */
  expectCommits(commits: readonly Commit[]): void {
    if (!this.closed) this.missed.expect(commits);
  }

  /** Feeds one event; yields its records, then what the event asks for (a child's enable, the
   * relay after the load event). `now`: the adapter's CDP time (src/cdp/clock.ts), for events
   * that carry no time of their own. */
  *onEvent(ev: RawEvent, now: number | null = null): Flow {
    if (this.closed) return;
    if (ev.method === "Page.screencastFrame") {
      if (ev.sessionId === undefined) yield* this.relayFrame(ev);
      return;
    }
    const t = monotonicTime(ev);
    const out = t === null ? [] : this.missed.pass(this.recorder.poll(t));
    // busy after both: an event that completes the last load may be the next one's first
    out.push(...this.push(ev, now));
    if (out.length > 0) yield { kind: "records", records: out, busy: this.recorder.active };
    if (ev.method === "Target.attachedToTarget") {
      this.frames.set(ev.params.sessionId, ev.params.targetInfo.targetId);
      yield* this.enableChild(ev.params.sessionId, ev.params.targetInfo.type);
    }
    if (ev.method === "Target.detachedFromTarget" && ev.params.sessionId !== undefined) this.frames.delete(ev.params.sessionId);
    // a dialog in a lab tab: headless Chromium shows it to no one and the page waited for ever
    // (the real-web /dialog/ made no record in a lab browser); closed at once, as automation does
    // (cancelled, so that a confirm() does not approve anything; a beforeunload's leave is taken,
    // as the lab leaves). The record still says it (handlers/page.ts onJavascriptDialogOpening)
    if (ev.method === "Page.javascriptDialogOpening" && this.lab) {
      yield* send("Page.handleJavaScriptDialog", { accept: ev.params.type === "beforeunload" }, ev.sessionId);
    }
    if (ev.method === "Page.loadEventFired") {
      if (ev.sessionId === undefined) yield* this.relayMetrics();
      // an iframe's document still open: at the frame's own load, or at the page's (which
      // waits for every frame's; the frame's may come before its session's Page.enable)
      const wanted = this.recorder.framesWanted;
      for (const [sessionId, frameId] of this.frames) {
        if ((ev.sessionId === undefined || ev.sessionId === sessionId) && wanted.includes(frameId)) {
          yield* this.relayFrameTiming(sessionId);
        }
      }
    }
  }

  /** The recorder's clock says `now` (CDP seconds): records of loads complete by then. One that
   * completes has the time in its log (raw-event.ts POLL_EVENT), logged while it is still being
   * recorded, so that it is the log's last event and a replay completes it there too. */
  poll(now: number): NavigationRecord[] {
    if (this.closed) return [];
    if (this.logged && this.recorder.due(now)) this.log({ method: POLL_EVENT, params: { timestamp: now } });
    return this.missed.pass(this.recorder.poll(now));
  }

  /** Ends the session (detached, tab closed): whatever is open is handed out; flows under way
   * stop at their next step. */
  close(): NavigationRecord[] {
    if (this.closed) return [];
    this.closed = true;
    return [...this.missed.pass(this.recorder.flush()), ...this.missed.close()];
  }

  private push(ev: RawEvent, now: number | null = null): NavigationRecord[] {
    const wallOffset = this.recorder.wallOffset;
    this.log(now === null || monotonicTime(ev) !== null ? ev : { ...ev, at: now, ...(wallOffset === null ? {} : { wallOffset }) });
    return this.missed.pass(this.recorder.push(ev, now));
  }

  /** A child resumed without Network.enable reports none of its requests' ends: its document
   * would be recorded with 0 bytes and no end. So each command is retried, then it resumes; a
   * command its kind of target has no domain for is not sent (NOT_FOR). */
  private *enableChild(sessionId: string, type: string): Flow {
    for (const c of CHILD_COMMANDS) {
      if (NOT_FOR[type]?.has(c.method) === true) continue;
      for (let attempt = 1; attempt <= CHILD_ATTEMPTS && !this.closed; attempt++) {
        const r = yield* send(c.method, c.params ?? {}, sessionId);
        if (r?.ok) break;
        if (attempt < CHILD_ATTEMPTS) yield { kind: "sleep", ms: CHILD_RETRY_MS * attempt };
      }
    }
  }

  /** Acknowledge first (the next frame waits for it), then decode and relay; between navigations,
   * only the last frame of a burst (IDLE_FRAME_MS). A frame without its time of display
   * (`metadata.timestamp` is optional in CDP) cannot be placed: dropped. */
  private *relayFrame(ev: EventOf<"Page.screencastFrame">): Flow {
    yield* send("Page.screencastFrameAck", { sessionId: ev.params.sessionId });
    const wallTime = ev.params.metadata.timestamp;
    if (wallTime === undefined || this.closed) return;
    if (this.framed && !this.recorder.active) {
      const n = ++this.idleFrames;
      yield { kind: "sleep", ms: IDLE_FRAME_MS };
      if (n !== this.idleFrames || this.closed) return;
    }
    const r: Reply = yield { kind: "decode", jpeg: ev.params.data };
    if (!r?.ok || this.closed || !Array.isArray(r.result)) return;
    const relayed: RawEvent = { method: FRAME_EVENT, params: { wallTime, histogram: r.result as number[] } };
    this.framed = true;
    const records = this.push(relayed);
    if (records.length > 0) yield { kind: "records", records, busy: this.recorder.active };
  }

  private *relayMetrics(): Flow {
    const r = yield* send("Performance.getMetrics", {});
    if (this.closed) return;
    if (r?.ok) {
      const { metrics } = r.result as Protocol.Performance.GetMetricsResponse;
      const records = this.push(loadMetricsEvent(metrics));
      if (records.length > 0) yield { kind: "records", records, busy: this.recorder.active };
    }
    if (this.recorder.wantsNavigationTiming) yield* this.relayNavigationTiming();
    else if (this.underWayAtEnable !== null && this.recorder.lacksLcp(this.underWayAtEnable)) yield* this.relayNavigationTiming();
    this.underWayAtEnable = null;
  }

  /** A navigation joined late: its document's own Navigation Timing, read in the isolated world,
   * tagged with the main frame's current loader id; then the LCP observer, which a document
   * created before the attach never ran (`buffered` replays its earlier candidates). */
  private *relayNavigationTiming(): Flow {
    const read = yield* this.readNavigationTiming();
    if (read === null) return;
    yield* this.pushRelayed(read.event);
    yield* send("Runtime.evaluate", { expression: LCP_SCRIPT, contextId: read.contextId });
  }

  /** The top frame's (or, with `sessionId`, a child session's frame's) Navigation Timing as
   * late.ts navTimingEvent, read in the recorder's isolated world; null when it cannot be read. */
  private *readNavigationTiming(sessionId?: string): Generator<Io, { event: RawEvent; contextId: number } | null, Reply> {
    const tree = yield* send("Page.getFrameTree", {}, sessionId);
    if (!tree?.ok || this.closed) return null;
    const { frame } = (tree.result as Protocol.Page.GetFrameTreeResponse).frameTree;
    const world = yield* send("Page.createIsolatedWorld", { frameId: frame.id, worldName: LCP_WORLD }, sessionId);
    if (!world?.ok || this.closed) return null;
    const contextId = (world.result as Protocol.Page.CreateIsolatedWorldResponse).executionContextId;
    const res = yield* send("Runtime.evaluate", { expression: NAV_TIMING_EXPRESSION, contextId, returnByValue: true }, sessionId);
    if (!res?.ok || this.closed) return null;
    const value: unknown = (res.result as Protocol.Runtime.EvaluateResponse).result.value;
    const event = typeof value === "string" ? navTimingEvent(frame.loaderId, value) : null;
    if (event === null) return null;
    return { event: sessionId === undefined ? event : { ...event, sessionId }, contextId };
  }

  private *pushRelayed(ev: RawEvent): Flow {
    const records = this.push(ev);
    if (records.length > 0) yield { kind: "records", records, busy: this.recorder.active };
  }

  /** An out-of-process iframe loaded while its document's end is missing (late.ts
   * endFromFrameTiming): its own Navigation Timing, read in an isolated world of its session. */
  private *relayFrameTiming(sessionId: string): Flow {
    const read = yield* this.readNavigationTiming(sessionId);
    if (read !== null) yield* this.pushRelayed(read.event);
  }
}

/** What a Flow's I/O is, for runFlow: chrome.debugger in the extension, a WebSocket CDP client in
 * the fixture recorder. */
export interface FlowIo {
  send(method: string, params: object, sessionId?: string): Promise<unknown>;
  sleep(ms: number): Promise<void>;
  /** A screencast frame's histogram (src/visual/histogram.ts) from its base64 JPEG. */
  decode(jpeg: string): Promise<number[]>;
  records(records: NavigationRecord[], busy: boolean): void;
}

/** Drives a flow to its end. A `send` that throws is handed to the flow as `{ok: false}`. */
export async function runFlow(flow: Flow, io: FlowIo): Promise<void> {
  let step = flow.next();
  while (step.done !== true) {
    const want = step.value;
    let reply: Reply = undefined;
    if (want.kind === "send") {
      reply = await io.send(want.method, want.params, want.sessionId).then(
        (result): Reply => ({ ok: true, result }),
        (e: unknown): Reply => ({ ok: false, error: e instanceof Error ? e.message : String(e) }));
    } else if (want.kind === "sleep") {
      await io.sleep(want.ms);
    } else if (want.kind === "decode") {
      reply = await io.decode(want.jpeg).then(
        (result): Reply => ({ ok: true, result }),
        (e: unknown): Reply => ({ ok: false, error: e instanceof Error ? e.message : String(e) }));
    } else {
      io.records(want.records, want.busy);
    }
    step = flow.next(reply);
  }
}
