/** The per-tab session core (src/cdp/session.ts), stepped with chosen replies, and every fixture
 * replayed through it as the extension's adapter would drive it. */
import { describe, expect, it } from "vitest";
import { fixedIds, golden, readLog, readMeta, scenarios } from "../../scripts/fixture-io.ts";
import { CHILD_COMMANDS, LOAD_METRICS_TITLE, OPTIONAL_COMMANDS, SCREENCAST, TAB_COMMANDS } from "../../src/cdp/enable-commands.ts";
import { monotonicTime } from "../../src/cdp/event-clock.ts";
import { NAV_TIMING_BINDING, NAV_TIMING_EXPRESSION } from "../../src/cdp/late.ts";
import { FRAME_EVENT, type RawEvent } from "../../src/cdp/raw-event.ts";
import {
  CHILD_ATTEMPTS, CHILD_RETRY_MS, FIRST_FRAME_STEP_MS, FIRST_FRAME_WAIT_MS, IDLE_FRAME_MS, SessionError, TabSession, runFlow, type Flow, type Io,
  type Reply,
} from "../../src/cdp/session.ts";
import type { Commit } from "../../src/cdp/missed.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { FRAME, committed, finished, lcpCandidate, lifecycle, navigation, received, response } from "./events.ts";

const OPTIONS = {
  source: "lab" as const, urlDetail: "full" as const, newId: () => "id",
  env: { browser: { name: "Chromium", version: "x" }, extension_version: "0", network: null },
};
const OK: Reply = { ok: true, result: {} };
const FAIL: Reply = { ok: false, error: "No target with given id" };

/** Steps a flow, answering each `send` with `answer`, and lists what it asked for. */
function drive(flow: Flow, answer: (w: Io & { kind: "send" }) => Reply = () => OK): Io[] {
  const seen: Io[] = [];
  let step = flow.next();
  while (step.done !== true) {
    seen.push(step.value);
    step = flow.next(step.value.kind === "send" ? answer(step.value) : undefined);
  }
  return seen;
}
const sends = (io: Io[]): string[] => io.flatMap((w) => (w.kind === "send" ? [`${w.sessionId ?? "tab"} ${w.method}`] : []));
const attached = (sessionId: string, type = "iframe"): RawEvent => ({
  method: "Target.attachedToTarget",
  params: { sessionId, targetInfo: { targetId: "t", type, title: "", url: "", attached: true, canAccessOpener: false }, waitingForDebugger: true },
});

describe("session core: enable", () => {
  it("sends the tab's enable commands in order, on the tab's own session", () => {
    const io = drive(new TabSession(OPTIONS).enable());
    expect(sends(io)).toEqual([...TAB_COMMANDS, ...OPTIONAL_COMMANDS].map((c) => `tab ${c.method}`));
  });

  it("stops at the first refused command with a SessionError", () => {
    const flow = new TabSession(OPTIONS).enable();
    expect(() => drive(flow, (w) => (w.method === "Page.enable" ? FAIL : OK))).toThrow(SessionError);
  });
});

describe("session core: screencast frames (visual metrics)", () => {
  const frame = (timestamp?: number): RawEvent => ({
    method: "Page.screencastFrame",
    params: { data: "/9j/", sessionId: 7, metadata: { offsetTop: 0, pageScaleFactor: 1, deviceWidth: 500, deviceHeight: 280,
      scrollOffsetX: 0, scrollOffsetY: 0, ...(timestamp === undefined ? {} : { timestamp }) } },
  });
  const histogram = new Array<number>(768).fill(0);

  it("starts the screencast last, only with visual metrics on, and goes on if it is refused", () => {
    expect(sends(drive(new TabSession(OPTIONS).enable()))).not.toContain(`tab ${SCREENCAST.method}`);
    const io = drive(new TabSession({ ...OPTIONS, visual: true }).enable(), (w) => (w.method === SCREENCAST.method ? FAIL : OK));
    expect(sends(io)).toEqual([...TAB_COMMANDS, ...OPTIONAL_COMMANDS, SCREENCAST].map((c) => `tab ${c.method}`));
  });

  it("goes on when an optional command is refused", () => {
    const optional = new Set<string>(OPTIONAL_COMMANDS.map((c) => c.method));
    const io = drive(new TabSession({ ...OPTIONS, visual: true }).enable(), (w) => (optional.has(w.method) ? FAIL : OK));
    expect(sends(io)).toEqual([...TAB_COMMANDS, ...OPTIONAL_COMMANDS, SCREENCAST].map((c) => `tab ${c.method}`));
  });

  it("waits for the first frame after starting the screencast (the screen the next load starts on), at most so long", () => {
    const idle = drive(new TabSession({ ...OPTIONS, visual: true }).enable());
    expect(idle.filter((w) => w.kind === "sleep")).toHaveLength(FIRST_FRAME_WAIT_MS / FIRST_FRAME_STEP_MS);
    const s = new TabSession({ ...OPTIONS, visual: true });
    const enable = s.enable();
    let step = enable.next();
    while (!(step.value?.kind === "send" && step.value.method === SCREENCAST.method)) step = enable.next(OK);
    expect(enable.next(OK).value).toEqual({ kind: "sleep", ms: FIRST_FRAME_STEP_MS });
    const relay = s.onEvent(frame(1700000000.1));
    relay.next();
    relay.next(OK);
    relay.next({ ok: true, result: histogram });
    expect(enable.next().done).toBe(true);
  });

  it("acknowledges a frame first, then relays its decoded histogram to the recorder, never the JPEG", () => {
    const log: RawEvent[] = [];
    const flow = new TabSession({ ...OPTIONS, visual: true }, (ev) => log.push(ev)).onEvent(frame(1700000000.25));
    const ack = flow.next();
    expect(ack.value).toEqual({ kind: "send", method: "Page.screencastFrameAck", params: { sessionId: 7 } });
    expect(flow.next(OK).value).toEqual({ kind: "decode", jpeg: "/9j/" });
    expect(flow.next({ ok: true, result: histogram }).done).toBe(true);
    expect(log).toEqual([{ method: FRAME_EVENT, params: { wallTime: 1700000000.25, histogram } }]);
  });

  it("between navigations decodes only the last frame of a burst; while one is recorded, every frame at once", () => {
    const log: RawEvent[] = [];
    const s = new TabSession({ ...OPTIONS, visual: true }, (ev) => log.push(ev));
    const first = s.onEvent(frame(1700000000.1));
    first.next();
    expect(first.next(OK).value).toEqual({ kind: "decode", jpeg: "/9j/" });
    first.next({ ok: true, result: histogram });
    // a tab held after its record: each frame waits IDLE_FRAME_MS; one superseded meanwhile is dropped
    const a = s.onEvent(frame(1700000000.2));
    const b = s.onEvent(frame(1700000000.21));
    a.next();
    b.next();
    expect(a.next(OK).value).toEqual({ kind: "sleep", ms: IDLE_FRAME_MS });
    expect(b.next(OK).value).toEqual({ kind: "sleep", ms: IDLE_FRAME_MS });
    expect(a.next().done).toBe(true);
    expect(b.next().value).toEqual({ kind: "decode", jpeg: "/9j/" });
    b.next({ ok: true, result: histogram });
    expect(log.map((ev) => (ev.params as { wallTime?: number } | undefined)?.wallTime)).toEqual([1700000000.1, 1700000000.21]);
    // a navigation under way: decoded at once
    drive(s.onEvent(navigation("L1", "https://a.test/", 10)));
    expect(s.recorder.active).toBe(true);
    const c = s.onEvent(frame(1700000000.3));
    c.next();
    expect(c.next(OK).value).toEqual({ kind: "decode", jpeg: "/9j/" });
  });

  it("drops a frame it cannot place or decode (after acknowledging it)", () => {
    const log: RawEvent[] = [];
    const s = new TabSession({ ...OPTIONS, visual: true }, (ev) => log.push(ev));
    expect(sends(drive(s.onEvent(frame())))).toEqual(["tab Page.screencastFrameAck"]);
    const flow = s.onEvent(frame(1700000000.5));
    flow.next();
    flow.next(OK);
    expect(flow.next(FAIL).done).toBe(true);
    expect(log).toEqual([]);
  });
});

describe("session core: child sessions", () => {
  it("enables an auto-attached child on its own session, then resumes it", () => {
    const io = drive(new TabSession(OPTIONS).onEvent(attached("C1")));
    expect(sends(io)).toEqual(CHILD_COMMANDS.map((c) => `C1 ${c.method}`));
  });

  it("does not ask a dedicated worker for the Page domain it has not got: no retry keeps it paused", () => {
    // Chromium 156 refuses Page.enable on a worker's session ("'Page.enable' wasn't found"); the
    // refused command was retried with waits while the worker stayed paused
    const refusing = (w: Io & { kind: "send" }): Reply => (w.method === "Page.enable" ? FAIL : OK);
    const io = drive(new TabSession(OPTIONS).onEvent(attached("W1", "worker")), refusing);
    expect(sends(io)).toEqual(CHILD_COMMANDS.filter((c) => c.method !== "Page.enable").map((c) => `W1 ${c.method}`));
    expect(io.filter((w) => w.kind === "sleep")).toEqual([]);
  });

  it("retries a refused command with growing waits, then goes on (the frame is always resumed)", () => {
    const io = drive(new TabSession(OPTIONS).onEvent(attached("C1")), (w) => (w.method === "Network.enable" ? FAIL : OK));
    const net = io.filter((w) => w.kind === "send" && w.method === "Network.enable");
    expect(net).toHaveLength(CHILD_ATTEMPTS);
    expect(io.filter((w) => w.kind === "sleep")).toEqual([1, 2].map((n) => ({ kind: "sleep", ms: CHILD_RETRY_MS * n })));
    expect(sends(io).at(-1)).toBe("C1 Runtime.runIfWaitingForDebugger");
  });

  it("a command that succeeds on its second try is not sent a third time", () => {
    let n = 0;
    const io = drive(new TabSession(OPTIONS).onEvent(attached("C1")), (w) => (w.method === "Page.enable" && n++ === 0 ? FAIL : OK));
    expect(sends(io).filter((s) => s === "C1 Page.enable")).toHaveLength(2);
  });

  it("stops retrying once the session is closed", () => {
    const s = new TabSession(OPTIONS);
    const flow = s.onEvent(attached("C1"));
    let step = flow.next();
    expect(step.value).toMatchObject({ kind: "send", method: "Network.enable" });
    s.close();
    step = flow.next(FAIL);
    const rest: Io[] = [];
    while (step.done !== true) { rest.push(step.value); step = flow.next(FAIL); }
    expect(sends(rest)).toEqual([]);
  });
});

describe("session core: the relay after the load event", () => {
  const load: RawEvent = { method: "Page.loadEventFired", params: { timestamp: 10 } };

  it("asks the tab for its metrics after the main frame's load event, and feeds them to the recorder", () => {
    const logged: RawEvent[] = [];
    const io = drive(new TabSession(OPTIONS, (ev) => logged.push(ev)).onEvent(load),
      () => ({ ok: true, result: { metrics: [{ name: "NavigationStart", value: 9 }] } }));
    expect(sends(io)).toEqual(["tab Performance.getMetrics"]);
    expect(logged.at(-1)).toEqual({ method: "Performance.metrics", params: { title: LOAD_METRICS_TITLE, metrics: [{ name: "NavigationStart", value: 9 }] } });
  });

  it("does not relay for a child frame's load event", () => {
    expect(sends(drive(new TabSession(OPTIONS).onEvent({ ...load, sessionId: "C1" })))).toEqual([]);
  });

  it("logs every event it feeds the recorder, in order", () => {
    const logged: RawEvent[] = [];
    const s = new TabSession(OPTIONS, (ev) => logged.push(ev));
    drive(s.onEvent(attached("C1")));
    drive(s.onEvent({ method: "Page.frameStartedLoading", params: { frameId: "F" } }));
    expect(logged.map((e) => e.method)).toEqual(["Target.attachedToTarget", "Page.frameStartedLoading"]);
  });
});

/**
 * Each fixture replayed through the session core as the adapter drives it: its raw events go in;
 * the events the fixture holds because the core relayed them (the load metrics, a late
 * navigation's Navigation Timing) are NOT fed in: the core must ask for them, and its request is
 * answered with what the fixture recorded, at the point where the fixture has it. The records
 * must be the goldens: the fixture recorder and the extension run one choreography.
 */
function replay(name: string, commits: Commit[] = [], from = 0): { records: NavigationRecord[]; unasked: string[]; unanswered: string[] } {
  // after_attach_at: where the adapter's afterAttach(true) ran in a log the log tap captured (an
  // attach that ended after the tab's commit), so the relays it asked for are at their place
  const meta = readMeta(name) as { mainFrameId?: string; after_attach_at?: number };
  const session = new TabSession({
    ...(meta.mainFrameId === undefined ? {} : { mainFrameId: meta.mainFrameId }), source: "lab", urlDetail: "full",
    env: { browser: { name: "Chromium", version: "fixture" }, extension_version: "0.0.0", network: null }, newId: fixedIds(),
    visual: true, // as the goldens (scripts/fixture-io.ts): the relayed frames are in the log
  });
  const records: NavigationRecord[] = [];
  const unasked: string[] = [];
  const parked: { flow: Flow; method: string }[] = [];
  const RELAYED = new Set(["Performance.getMetrics", "Page.getFrameTree"]);
  const advance = (flow: Flow, reply: Reply): void => {
    let step = flow.next(reply);
    while (step.done !== true) {
      const w = step.value;
      if (w.kind === "records") records.push(...w.records);
      if (w.kind === "send" && RELAYED.has(w.method)) { parked.push({ flow, method: w.method }); return; }
      step = flow.next(w.kind === "send" ? { ok: true, result: w.method === "Page.createIsolatedWorld" ? { executionContextId: 1 } : {} } : undefined);
    }
  };
  const resume = (method: string, reply: Reply, then?: (flow: Flow) => void): void => {
    const i = parked.findIndex((p) => p.method === method);
    const p = parked[i];
    if (p === undefined) { unasked.push(method); return; }
    parked.splice(i, 1);
    if (then === undefined) { advance(p.flow, reply); return; }
    then(p.flow);
  };
  session.expectCommits(commits);
  for (const [i, ev] of readLog(name).entries()) {
    if (i < from) continue;
    if (i === meta.after_attach_at) advance(session.afterAttach(true), undefined);
    if (ev.method === "Performance.metrics" && ev.params.title === LOAD_METRICS_TITLE) {
      resume("Performance.getMetrics", { ok: true, result: { metrics: ev.params.metrics } });
    } else if (ev.method === "Runtime.bindingCalled" && ev.params.name === NAV_TIMING_BINDING) {
      const { loaderId, result } = JSON.parse(ev.params.payload) as { loaderId: string; result: string };
      resume("Page.getFrameTree", undefined, (flow) => {
        // frame tree -> isolated world -> the Navigation Timing expression, answered from the fixture
        let step = flow.next({ ok: true, result: { frameTree: { frame: { id: meta.mainFrameId ?? "F", loaderId } } } });
        step = flow.next({ ok: true, result: { executionContextId: 1 } });
        expect(step.value).toMatchObject({ kind: "send", method: "Runtime.evaluate", params: { expression: NAV_TIMING_EXPRESSION } });
        advance(flow, { ok: true, result: { result: { type: "string", value: result } } });
      });
    } else {
      advance(session.onEvent(ev), undefined);
    }
  }
  records.push(...session.close());
  return { records, unasked, unanswered: parked.map((p) => p.method) };
}

describe("session core: every fixture replays to its golden", () => {
  it("has fixtures to replay", () => expect(scenarios().length).toBeGreaterThanOrEqual(9));
  for (const name of scenarios()) {
    it(name, () => {
      const { records, unasked, unanswered } = replay(name);
      // the core asked for exactly the relayed events the fixture holds
      expect(unasked).toEqual([]);
      expect(unanswered).toEqual([]);
      expect(records.length).toBeGreaterThan(0);
      expect(records).toEqual(golden(name));
    });
  }
});

describe("session core: documents committed and left before the attach (src/cdp/missed.ts)", () => {
  const NAME = "rw-redirect-script";
  const [left, landing] = golden(NAME);
  const at = (r: NavigationRecord | undefined): number => (r?.page.started_at_ms ?? NaN) + 5;
  const commits = (): Commit[] => [{ url: left?.page.url ?? "", at: at(left) }, { url: landing?.page.url ?? "", at: at(landing) }];

  it("the real log of a script redirect: both documents are recorded, so no record is added", () => {
    expect(left?.page.url).toMatch(/\/redir\/script\.html$/);
    expect(replay(NAME, commits()).records).toEqual(golden(NAME));
  });

  it("the same log joined at the landing page's request: the page left before it gets a `missed` record, placed first", () => {
    const log = readLog(NAME);
    const from = log.findIndex((ev) => ev.method === "Network.requestWillBeSent" && ev.params.type === "Document" &&
      ev.params.request.url === landing?.page.url);
    expect(from).toBeGreaterThan(0);
    const { records } = replay(NAME, commits(), from);
    expect(records).toHaveLength(2);
    expect(records[0]?.page).toMatchObject({
      url: left?.page.url, started_at_ms: at(left), late_attach: "missed", aborted: true, incomplete: true,
      incomplete_reasons: ["aborted"], not_seen: ["requests_before_attach"], kind: "navigation",
    });
    expect(records[0]?.requests).toEqual([]);
    expect(Object.values(records[0]?.milestones ?? {}).every((v) => v === null)).toBe(true);
    // the landing page's record is the one recorded with the whole log
    expect(records[1]?.requests).toEqual(landing?.requests);
    expect(records[1]?.milestones).toEqual(landing?.milestones);
  });

  it("a commit no record follows is missed at the close; after the close nothing is added", () => {
    const s = new TabSession(OPTIONS);
    s.expectCommits([{ url: "https://a.test/a", at: 1_000 }]);
    expect(s.poll(1)).toEqual([]);
    const closed = s.close();
    expect(closed.map((r) => [r.page.url, r.page.late_attach, r.page.started_at_ms])).toEqual([["https://a.test/a", "missed", 1_000]]);
    s.expectCommits([{ url: "https://a.test/b", at: 2_000 }]);
    expect(s.close()).toEqual([]);
  });
});

describe("session core: every fixture with its commits handed over replays to its golden", () => {
  // the real-site corpus (console output, service workers, iframes, streams left open, redirects
  // by HTTP, meta and script, soft navigations, downloads...): each navigation record takes the
  // commit of its own page, so handing the commits over adds no record
  for (const name of scenarios()) {
    it(name, () => {
      const want = golden(name);
      const commits = want.filter((r) => (r.page.kind ?? "navigation") === "navigation")
        .map((r) => ({ url: r.page.url, at: r.page.started_at_ms + 5 }));
      expect(replay(name, commits).records).toEqual(want);
    });
  }
});

describe("session core: completion in event time", () => {
  it("an event long after a load completes it (polled at the event's own time), busy only if it starts the next", () => {
    const meta = readMeta("h2") as { mainFrameId: string };
    const s = new TabSession({ ...OPTIONS, mainFrameId: meta.mainFrameId });
    const events = readLog("h2");
    const seen: Io[] = [];
    for (const ev of events) seen.push(...drive(s.onEvent(ev), () => ({ ok: true, result: { metrics: [] } })));
    const last = Math.max(...events.map((e) => monotonicTime(e) ?? 0));
    const io = drive(s.onEvent({ method: "Page.frameStartedLoading", params: { frameId: "F" } }));
    expect(io).toEqual([]);
    const late = drive(s.onEvent({ method: "Network.dataReceived", params: { requestId: "nope", timestamp: last + 60, dataLength: 1, encodedDataLength: 1 } }));
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({ kind: "records", busy: false });
    expect(s.close()).toEqual([]);
  });
});

describe("runFlow", () => {
  it("hands a thrown send to the flow as a refusal, sleeps, and delivers records", async () => {
    const calls: string[] = [];
    await runFlow(new TabSession(OPTIONS).onEvent(attached("C1")), {
      send: (method) => { calls.push(method); return method === "Page.enable" ? Promise.reject(new Error("gone")) : Promise.resolve({}); },
      sleep: (ms) => { calls.push(`sleep ${ms}`); return Promise.resolve(); },
      decode: () => Promise.reject(new Error("no frames here")),
      records: () => undefined,
    });
    expect(calls).toEqual(["Network.enable", "Target.setAutoAttach", "Page.enable", "sleep 20", "Page.enable", "sleep 40",
      "Page.enable", "Runtime.runIfWaitingForDebugger"]);
  });
});

describe("session core: a navigation that committed while the attach's enables were under way", () => {
  // everyday: the attach at a navigation races it. CI run 49 (2026-11-29): a script redirect's
  // landing page, seen from its request (late_attach null), had its load event and no first
  // contentful paint or LCP: the paint came before Page.setLifecycleEventsEnabled took effect, and
  // the document was made before the LCP script was added
  const DOC = "https://a.test/landing.html";
  // the page's timeOrigin is its NavigationStart (9.999 s on the CDP clock: the request's
  // wallTime is 1_700_000_000 + its timestamp in these events)
  const timing = JSON.stringify({ timeOrigin: 1_700_000_009_999, fcp: 42.5,
    entry: { name: DOC, nextHopProtocol: "h2", responseStatus: 200, contentType: "text/html", fetchStart: 1, responseStart: 5,
      responseEnd: 6, transferSize: 400, encodedBodySize: 100, decodedBodySize: 100, deliveryType: "" } });

  /** `commit`: how the document's commit reached the recorder before the enables were done: its
   * frameNavigated, only the lifecycle events' replay of it (Page.enable took effect after the
   * frameNavigated: the log of a landing page, everyday, 2026-11-29), neither but its lifecycle
   * events from DOMContentLoaded on (another such log), or not at all yet. */
  function attachedMidLoad(commit: "frame" | "replay" | "dcl" | "none", lcpBeforeLoad = false):
    { io: Io[]; atLoad: Io[]; records: NavigationRecord[] } {
    const s = new TabSession({ ...OPTIONS, mainFrameId: FRAME });
    const records: NavigationRecord[] = [];
    const take = (io: Io[]): Io[] => { for (const w of io) if (w.kind === "records") records.push(...w.records); return io; };
    const answer = (w: Io & { kind: "send" }): Reply => w.method === "Page.getFrameTree"
      ? { ok: true, result: { frameTree: { frame: { id: FRAME, loaderId: "D" } } } }
      : w.method === "Page.createIsolatedWorld" ? { ok: true, result: { executionContextId: 3 } }
      : w.method === "Runtime.evaluate" && (w.params as { expression?: string } | undefined)?.expression === NAV_TIMING_EXPRESSION
        ? { ok: true, result: { result: { type: "string", value: timing } } }
      : w.method === "Performance.getMetrics" ? { ok: true, result: { metrics: [{ name: "NavigationStart", value: 9.999 }] } } : OK;
    take(drive(s.enable()));
    take(drive(s.onEvent(navigation("D", DOC, 10))));
    take(drive(s.onEvent(received("D", 10.005, response(DOC)))));
    if (commit === "frame") take(drive(s.onEvent(committed("D", DOC))));
    if (commit === "replay") take(drive(s.onEvent(lifecycle("commit", "D", 10.004))));
    if (commit === "dcl") take(drive(s.onEvent(lifecycle("DOMContentLoaded", "D", 10.02))));
    const io = take(drive(s.afterAttach(false), answer));
    take(drive(s.onEvent(finished("D", 10.006, 500))));
    take(drive(s.onEvent(lifecycle("DOMContentLoaded", "D", 10.02))));
    if (lcpBeforeLoad) take(drive(s.onEvent(lcpCandidate(1_700_000_010.025))));
    const atLoad = take(drive(s.onEvent({ method: "Page.loadEventFired", params: { timestamp: 10.03 } }), answer));
    take(drive(s.onEvent({ method: "Page.loadEventFired", params: { timestamp: 10.03 }, sessionId: "other" })));
    records.push(...s.close());
    return { io, atLoad, records };
  }

  it("reads the page's paint timing and starts the LCP observer after the enables: the record has its first paint", () => {
    for (const commit of ["frame", "replay", "dcl"] as const) {
      const { io, records } = attachedMidLoad(commit);
      expect(sends(io), commit).toEqual(["tab Page.getFrameTree", "tab Page.createIsolatedWorld", "tab Runtime.evaluate", "tab Runtime.evaluate"]);
      const [r] = records;
      expect(r?.page.late_attach).toBeNull();
      expect(r?.milestones.fcp_ms).toBeCloseTo(42.5, 3);
    }
  });

  it("its commit not seen yet: at its load, if no LCP candidate came, the same relay (its document may predate the LCP script)", () => {
    const { io, atLoad, records } = attachedMidLoad("none");
    expect(sends(io)).toEqual([]);
    expect(sends(atLoad)).toEqual(["tab Performance.getMetrics", "tab Page.getFrameTree", "tab Page.createIsolatedWorld", "tab Runtime.evaluate",
      "tab Runtime.evaluate"]);
    expect(records[0]?.milestones.fcp_ms).toBeCloseTo(42.5, 3);
    // a candidate came: the new document's own observer runs; only the metrics
    const seen = attachedMidLoad("none", true);
    expect(sends(seen.atLoad)).toEqual(["tab Performance.getMetrics"]);
    expect(seen.records[0]?.milestones.lcp_ms).toBeCloseTo(26, 3);
  });
});

describe("session core: JavaScript dialogs", () => {
  const opening = (type: "alert" | "confirm" | "prompt" | "beforeunload", sessionId?: string): RawEvent => ({
    method: "Page.javascriptDialogOpening",
    params: { url: "https://a.test/dialog/", frameId: "F", message: "", type, hasBrowserHandler: true },
    ...(sessionId === undefined ? {} : { sessionId }),
  });
  const handled = (io: Io[]): unknown[] => io.flatMap((w) => (w.kind === "send" && w.method === "Page.handleJavaScriptDialog" ? [{ ...w.params, on: w.sessionId ?? "tab" }] : []));

  it("closes one in a lab tab as it opens, on the session it came from: cancelled, but a beforeunload's leave taken", () => {
    const s = new TabSession(OPTIONS);
    expect(handled(drive(s.onEvent(opening("alert"))))).toEqual([{ accept: false, on: "tab" }]);
    expect(handled(drive(s.onEvent(opening("confirm", "child"))))).toEqual([{ accept: false, on: "child" }]);
    expect(handled(drive(s.onEvent(opening("beforeunload"))))).toEqual([{ accept: true, on: "tab" }]);
  });

  it("leaves it to the user in everyday browsing and in an experiment", () => {
    for (const source of ["passive", "experiment"] as const) {
      expect(handled(drive(new TabSession({ ...OPTIONS, source }).onEvent(opening("alert"))))).toEqual([]);
    }
  });
});
