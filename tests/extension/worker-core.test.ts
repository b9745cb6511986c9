/** The worker core (src/worker/core.ts): each decision of the service worker, event by event. */
import { describe, expect, it } from "vitest";
import { golden } from "../../scripts/fixture-io.ts";
import { enrol, newExperiment, pendingArm, type ExperimentState } from "../../src/experiment/assign.ts";
import type { HostMsg, LabConfig } from "../../src/messages/protocol.ts";
import { EMPTY_OUTBOX } from "../../src/outbox/outbox.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/policy/settings.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { LAB_WAIT_MS, RETRY_MS, initialState, step, type WorkerState } from "../../src/worker/core.ts";
import type { Effect, WorkerEvent } from "../../src/worker/events.ts";
import { HOUR_MS } from "../../src/worker/pause.ts";

const T0 = 1_800_000_000_000;
const ON: Settings = { ...DEFAULT_SETTINGS, enabled: true };
const base = golden("h2")[0] as NavigationRecord;
const rec = (id: string, origin = base.page.origin): NavigationRecord => ({ ...base, id, page: { ...base.page, origin } });
const HTTPS = "https://a.test/page";
const tab = (tabId: number, url = HTTPS, incognito = false) => ({ tabId, url, incognito });
const hello = (lab: LabConfig | null = null): HostMsg => ({ type: "hello", schema: 1, host_version: "0.1", lab });
const LAB: LabConfig = { record: true, url_detail: "full", context: {}, navigate: ["https://a.test/"], advance: "ack", quiet_ms: null, visual: false,
  save_log: false, start_at_ms: null, hold: false };
const RELAY = { host: "127.0.0.1", port: 9, username: "u", password: "p" };

/** Runs events through the core from `s`, returning the last state and every effect. */
function run(s: WorkerState, events: WorkerEvent[], now = T0): { s: WorkerState; fx: Effect[] } {
  const fx: Effect[] = [];
  for (const ev of events) {
    const r = step(s, ev, now);
    s = r.state;
    fx.push(...r.effects);
  }
  return { s, fx };
}
const types = (fx: Effect[]): string[] => fx.map((e) => e.type);
const of = <T extends Effect["type"]>(fx: Effect[], t: T): Extract<Effect, { type: T }>[] =>
  fx.filter((e): e is Extract<Effect, { type: T }> => e.type === t);
const state = (settings: Settings = ON, exp: ExperimentState | null = null): WorkerState =>
  initialState(settings, exp, null, EMPTY_OUTBOX);
const record = (tabId: number, r: NavigationRecord, busy = false): WorkerEvent =>
  ({ type: "record", tabId, record: r, applied: new Map(), installed: new Set(), busy });

describe("worker core: what to attach", () => {
  it("attaches nothing while recording is off (the default)", () => {
    const { fx, s } = run(state(DEFAULT_SETTINGS), [{ type: "before_navigate", tab: tab(1) }]);
    expect(of(fx, "attach")).toEqual([]);
    expect(s.attached.size).toBe(0);
  });

  it("attaches an in-scope tab before its navigation, with the settings' source, URL detail and visual switch", () => {
    const { fx, s } = run(state({ ...ON, urlDetail: "path" }), [{ type: "before_navigate", tab: tab(1) }]);
    expect(of(fx, "attach")).toEqual([{ type: "attach", tabId: 1, committed: false, source: "passive", urlDetail: "path", quietMs: null, visual: false,
      saveLog: false, soft: null }]);
    expect([...s.attached]).toEqual([1]);
    const visual = run(state({ ...ON, visual: true }), [{ type: "before_navigate", tab: tab(2) }]);
    expect(of(visual.fx, "attach")).toMatchObject([{ tabId: 2, visual: true }]);
    const tapped = run(state({ ...ON, saveLog: true }), [{ type: "before_navigate", tab: tab(3) }]);
    expect(of(tapped.fx, "attach")).toMatchObject([{ tabId: 3, saveLog: true }]);
  });

  it("attaches once: a second navigation of an attached tab sends nothing", () => {
    const { fx } = run(state(), [{ type: "before_navigate", tab: tab(1) }, { type: "before_navigate", tab: tab(1) }]);
    expect(of(fx, "attach")).toHaveLength(1);
  });

  it("never attaches to incognito tabs or chrome:// pages", () => {
    const { fx } = run(state(), [
      { type: "before_navigate", tab: tab(1, HTTPS, true) },
      { type: "before_navigate", tab: tab(2, "chrome://settings") },
      { type: "created", tab: tab(3, "https://chromewebstore.google.com/x") },
    ]);
    expect(of(fx, "attach")).toEqual([]);
  });

  it("follows an allowlist", () => {
    const { fx } = run(state({ ...ON, scope: "allowlist", allowlist: ["b.test"] }), [
      { type: "before_navigate", tab: tab(1, "https://a.test/") },
      { type: "before_navigate", tab: tab(2, "https://x.b.test/") },
    ]);
    expect(of(fx, "attach").map((e) => e.tabId)).toEqual([2]);
  });

  it("detaches a tab that navigates out of scope", () => {
    const s = state({ ...ON, scope: "denylist", denylist: ["b.test"] });
    const { fx, s: after } = run(s, [{ type: "before_navigate", tab: tab(1) }, { type: "before_navigate", tab: tab(1, "https://b.test/") }]);
    expect(types(fx)).toEqual(["attach", "detach"]);
    expect(after.attached.size).toBe(0);
  });

  it("at commit attaches with `committed` (a tab that showed chrome://newtab)", () => {
    const { fx } = run(state(), [{ type: "committed", tab: tab(4), at: 1_000, backForward: false }]);
    expect(of(fx, "attach")[0]?.committed).toBe(true);
  });

  it("an attach refused after the commit it raced (typed into a new tab) is retried as a commit attach", () => {
    // CI failure of tests/e2e/test_new_tab_e2e.py: the attach started at onBeforeNavigate was
    // still under way at onCommitted, then chrome.debugger refused it (chrome://newtab)
    const { fx, s } = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "attach_failed", tabId: 4 },
    ]);
    expect(of(fx, "attach").map((e) => e.committed)).toEqual([false, true]);
    expect(s.attached.has(4)).toBe(true);
  });

  it("an attach that succeeds after the commit it raced joins that load; one that did not race does not", () => {
    const raced = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "attached", tabId: 4 },
    ]);
    expect(of(raced.fx, "join_commit")).toEqual([{ type: "join_commit", tabId: 4 }]);
    expect(raced.s.attaching.size).toBe(0);
    const calm = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "attached", tabId: 4 }, { type: "committed", tab: tab(4), at: 1_000, backForward: false },
    ]);
    expect(of(calm.fx, "join_commit")).toEqual([]);
    expect(of(calm.fx, "attach")).toHaveLength(1);
  });

  it("hands the session every in-scope commit seen while the attach was under way, in order (a script redirect)", () => {
    const landing = tab(4, "https://a.test/landing.html");
    const { fx, s } = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false },
      { type: "committed", tab: tab(4, "https://excluded.test/", true), at: 1_050, backForward: false },
      { type: "committed", tab: tab(4, "https://a.test/back"), at: 1_060, backForward: true },
      { type: "committed", tab: landing, at: 1_100, backForward: false }, { type: "attached", tabId: 4 },
    ]);
    expect(of(fx, "expect_commits")).toEqual([{ type: "expect_commits", tabId: 4, commits: [
      { url: HTTPS, at: 1_000 }, { url: landing.url, at: 1_100 },
    ] }]);
    expect(types(fx).slice(-2)).toEqual(["expect_commits", "join_commit"]);
    expect(s.commits.size).toBe(0);
    // once attached, each commit goes to the session as it is reported (one made while the
    // domains were being enabled can be reported after the attach, and its document be left
    // before the recorder saw it); a back/forward one never (a restore has its own record)
    const after = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "attached", tabId: 4 },
      { type: "committed", tab: tab(4), at: T0 + 1, backForward: false },
      { type: "committed", tab: tab(4, "https://excluded.test/", true), at: T0 + 2, backForward: false },
      { type: "committed", tab: tab(4), at: T0 + 3, backForward: true },
    ]);
    expect(of(after.fx, "expect_commits")).toEqual([{ type: "expect_commits", tabId: 4, commits: [{ url: HTTPS, at: T0 + 1 }] }]);
  });

  it("a commit takes its navigation's start from onBeforeNavigate of the same URL (not after a redirect)", () => {
    const { fx } = run(state(), [
      { type: "before_navigate", tab: tab(4), at: 900 }, { type: "committed", tab: tab(4), at: 1_000, backForward: false },
      { type: "before_navigate", tab: tab(4, "https://a.test/moved"), at: 1_100 },
      { type: "committed", tab: tab(4, "https://a.test/final"), at: 1_200, backForward: false }, { type: "attached", tabId: 4 },
      { type: "removed", tabId: 4 },
    ]);
    expect(of(fx, "expect_commits")[0]?.commits).toEqual([
      { url: HTTPS, at: 1_000, startedAt: 900 }, { url: "https://a.test/final", at: 1_200 },
    ]);
    const gone = run(state(), [{ type: "before_navigate", tab: tab(4), at: 900 }, { type: "removed", tabId: 4 }]);
    expect(gone.s.starts.size).toBe(0);
  });

  it("a top-level commit of a document first committed in a prerendering frame is its activation", () => {
    // as Chromium 156 reported a prerender of /prerender/later.html's rule (diagnosed 2026-11-29):
    // the prerender's commit in frame 6 ("prerender"), then, 2 s later, frame 0's onBeforeNavigate
    // and a commit of the same documentId
    const next = tab(4, "https://a.test/next.html");
    const { fx, s } = run(state(), [
      { type: "prerendered", tabId: 4, documentId: "D1" }, { type: "prerendered", tabId: 4, documentId: "D1" },
      { type: "before_navigate", tab: next, at: 2_000 }, { type: "committed", tab: next, at: 2_014, backForward: false, documentId: "D1" },
      { type: "attached", tabId: 4 },
      // the same document again (no longer prerendered), and another tab's commit of that id
      { type: "committed", tab: next, at: 3_000, backForward: false, documentId: "D1" },
      { type: "committed", tab: tab(5, next.url), at: 3_100, backForward: false, documentId: "D1" },
    ]);
    expect(of(fx, "expect_commits")).toEqual([
      { type: "expect_commits", tabId: 4, commits: [{ url: next.url, at: 2_014, startedAt: 2_000, activation: true }] },
      { type: "expect_commits", tabId: 4, commits: [{ url: next.url, at: 3_000, startedAt: 2_000 }] },
    ]);
    expect(s.prerendered.get(4)).toEqual([]);
    // a plain commit carries no activation; a tab's prerendered documents are few and go with it
    const plain = run(state(), [{ type: "committed", tab: tab(4), at: 1_000, backForward: false, documentId: "D2" }, { type: "attached", tabId: 4 }]);
    expect(of(plain.fx, "expect_commits")[0]?.commits).toEqual([{ url: HTTPS, at: 1_000 }]);
    const many = run(state(), Array.from({ length: 12 }, (_, i): WorkerEvent => ({ type: "prerendered", tabId: 4, documentId: `P${i}` })));
    expect(many.s.prerendered.get(4)).toEqual(["P4", "P5", "P6", "P7", "P8", "P9", "P10", "P11"]);
    expect(run(many.s, [{ type: "removed", tabId: 4 }]).s.prerendered.size).toBe(0);
  });

  it("an attach at the commit carries that commit, and a refused attach's commits go to its retry", () => {
    const atCommit = run(state(), [{ type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "attached", tabId: 4 }]);
    expect(of(atCommit.fx, "expect_commits")).toEqual([{ type: "expect_commits", tabId: 4, commits: [{ url: HTTPS, at: 1_000 }] }]);
    const refused = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "attach_failed", tabId: 4 },
      { type: "attached", tabId: 4 },
    ]);
    expect(of(refused.fx, "expect_commits")).toEqual([{ type: "expect_commits", tabId: 4, commits: [{ url: HTTPS, at: 1_000 }] }]);
    const gone = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "removed", tabId: 4 },
    ]);
    expect(gone.s.commits.size).toBe(0);
  });

  it("a tab let go while its attach was under way is not attached again at that attach's refusal", () => {
    const { fx, s } = run(state(), [
      { type: "before_navigate", tab: tab(4) }, { type: "committed", tab: tab(4), at: 1_000, backForward: false }, { type: "detached", tabId: 4 },
      { type: "attach_failed", tabId: 4 },
    ]);
    expect(of(fx, "attach")).toHaveLength(1);
    expect(s.attaching.size).toBe(0);
  });

  it("a refused attach with no commit meanwhile is not retried", () => {
    const { fx } = run(state(), [{ type: "before_navigate", tab: tab(4) }, { type: "attach_failed", tabId: 4 }]);
    expect(of(fx, "attach")).toHaveLength(1);
  });

  it("attaches a new tab opened on an in-scope URL at its creation", () => {
    const { fx } = run(state(), [{ type: "created", tab: tab(5) }, { type: "created", tab: tab(6, "about:blank") }]);
    expect(of(fx, "attach").map((e) => e.tabId)).toEqual([5]);
  });

  it("forgets a failed attach, so the next navigation tries again", () => {
    const { fx } = run(state(), [
      { type: "before_navigate", tab: tab(1) }, { type: "attach_failed", tabId: 1 }, { type: "before_navigate", tab: tab(1) },
    ]);
    expect(of(fx, "attach")).toHaveLength(2);
  });

  it("syncs every open tab: attaches the in-scope ones, detaches the rest, leaves the lab tab", () => {
    let s = run(state(), [{ type: "before_navigate", tab: tab(2) }]).s;
    s = { ...s, settings: { ...ON, scope: "allowlist", allowlist: ["c.test"] } };
    const { fx } = run(s, [{ type: "tabs", tabs: [tab(1, "https://c.test/"), tab(2), tab(3, "https://c.test/", true)] }]);
    expect(fx.map((e) => [e.type, "tabId" in e ? e.tabId : null])).toEqual([["attach", 1], ["detach", 2]]);
  });

  it("asks for every tab when the settings change", () => {
    const { fx } = run(state(DEFAULT_SETTINGS), [{ type: "settings", settings: ON }]);
    expect(types(fx)).toEqual(["query_tabs"]);
  });

  it("attaches an enrolled domain's tab for the experiment even with recording off", () => {
    const exp = enrol(newExperiment(7), "a.test");
    const { fx } = run(state(DEFAULT_SETTINGS, exp), [
      { type: "before_navigate", tab: tab(1, "https://www.a.test/") }, { type: "before_navigate", tab: tab(2, "https://b.test/") },
    ]);
    expect(of(fx, "attach").map((e) => e.tabId)).toEqual([1]);
  });
});

describe("worker core: records and the outbox", () => {
  it("queues an in-scope record, saves the outbox, sends it once the host said hello", () => {
    let { s, fx } = run(state(), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"), true)]);
    expect(types(fx)).toEqual(["attach", "lab_record", "save_outbox", "lab_queued", "show_record"]);
    expect(s.outbox.items.map((i) => i.msgId)).toEqual(["r1"]);
    ({ s, fx } = run(s, [{ type: "host", msg: hello() }]));
    expect(of(fx, "send").map((e) => e.msg.type === "record" && e.msg.msg_id)).toEqual(["r1"]);
    expect([...s.inflight]).toEqual(["r1"]);
  });

  it("saves the outbox before sending (a record is never sent before it is durable)", () => {
    const s = run(state(), [{ type: "host", msg: hello() }]).s;
    const { fx } = run(s, [record(1, rec("r1"), true)]);
    expect(types(fx).indexOf("save_outbox")).toBeLessThan(types(fx).indexOf("send"));
  });

  it("does not send a record twice while it is in flight", () => {
    const s = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true)]).s;
    const { fx } = run(s, [record(1, rec("r2"), true)]);
    expect(of(fx, "send").map((e) => e.msg.type === "record" && e.msg.msg_id)).toEqual(["r2"]);
  });

  it("drops a record whose page is out of scope (attached for something else)", () => {
    const s = state({ ...ON, scope: "denylist", denylist: ["a.test"] });
    const { fx, s: after } = run(s, [record(1, rec("r1", "https://a.test:443"))]);
    expect(types(fx)).not.toContain("save_outbox");
    expect(after.outbox.items).toEqual([]);
  });

  it("on ack forgets the record and tells the lab runner", () => {
    const s = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true)]).s;
    const { fx, s: after } = run(s, [{ type: "host", msg: { type: "ack", schema: 1, msg_id: "r1", id: "r1", duplicate: false } }]);
    expect(types(fx)).toEqual(["save_outbox", "lab_ack"]);
    expect(after.outbox.items).toEqual([]);
    expect(after.outbox.acked).toBe(1);
    expect(after.inflight.size).toBe(0);
  });

  it("retries after a retryable error, RETRY_MS later", () => {
    let { s } = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true)]);
    let fx: Effect[];
    ({ s, fx } = run(s, [{ type: "host", msg: { type: "error", schema: 1, msg_id: "r1", error: "busy", retry: true } }]));
    expect(of(fx, "timer")).toEqual([{ type: "timer", ms: RETRY_MS, event: { type: "retry", msgId: "r1" } }]);
    expect(s.outbox.items[0]?.attempts).toBe(1);
    ({ fx } = run(s, [{ type: "retry", msgId: "r1" }]));
    expect(of(fx, "send")).toHaveLength(1);
  });

  it("drops a record the host rejects as invalid, and counts it", () => {
    const s = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true)]).s;
    const { fx, s: after } = run(s, [{ type: "host", msg: { type: "error", schema: 1, msg_id: "r1", error: "bad", retry: false } }]);
    expect(of(fx, "timer")).toEqual([]);
    expect(after.outbox).toMatchObject({ items: [], droppedInvalid: 1 });
    expect(after.inflight.size).toBe(0);
  });

  it("resends what was in flight after the host comes back", () => {
    const s = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true), { type: "host_down" }]).s;
    expect(s.hostReady).toBe(false);
    const { fx } = run(s, [{ type: "host", msg: hello() }]);
    expect(of(fx, "send")).toHaveLength(1);
  });

  it("a send that failed is sent again at the next flush", () => {
    const s = run(state(), [{ type: "host", msg: hello() }, record(1, rec("r1"), true), { type: "send_failed", msgId: "r1" }]).s;
    const { fx } = run(s, [record(1, rec("r2"), true)]);
    expect(of(fx, "send").map((e) => e.msg.type === "record" && e.msg.msg_id)).toEqual(["r1", "r2"]);
  });
});

describe("worker core: letting go of idle tabs (the infobar goes with the last session)", () => {
  const AT_ONCE: Settings = { ...ON, holdS: 0 };
  it("detaches a tab idle after its record, and does not re-attach it on a tab sync", () => {
    let { s, fx } = run(state(AT_ONCE), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"))]);
    expect(types(fx).at(-1)).toBe("detach");
    expect(s.attached.has(1)).toBe(false);
    ({ s, fx } = run(s, [{ type: "tabs", tabs: [tab(1)] }]));
    expect(of(fx, "attach")).toEqual([]);
    ({ fx } = run(s, [{ type: "before_navigate", tab: tab(1) }]));
    expect(of(fx, "attach")).toHaveLength(1);
  });

  it("keeps a busy tab attached (its next load is under way)", () => {
    const { fx, s } = run(state(), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"), true)]);
    expect(of(fx, "detach")).toEqual([]);
    expect(s.attached.has(1)).toBe(true);
  });

  it("keeps the lab tab attached across its loads", () => {
    const s = run(state(), [{ type: "host", msg: hello(LAB) }, { type: "lab_tab", tabId: 9 }]).s;
    const { fx } = run(s, [record(9, rec("r1"))]);
    expect(of(fx, "detach")).toEqual([]);
  });

  it("attaches again for a single-page app's route change in a tab let go idle, as a soft navigation", () => {
    let { s } = run(state(AT_ONCE), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"))]);
    expect(s.idle.has(1)).toBe(true);
    const route = { ...tab(1), url: `${tab(1).url}#/route/2` };
    let fx: Effect[];
    ({ s, fx } = run(s, [{ type: "history_state", tab: route }]));
    expect(of(fx, "attach")).toEqual([expect.objectContaining({ tabId: 1, soft: route.url, committed: false })]);
    // attached already (or not in scope): nothing more
    ({ fx } = run(s, [{ type: "history_state", tab: route }]));
    expect(of(fx, "attach")).toEqual([]);
    const out = { ...tab(2), incognito: true };
    const idle2 = run(state(AT_ONCE), [{ type: "before_navigate", tab: out }, record(2, rec("r2"))]).s;
    expect(of(run(idle2, [{ type: "history_state", tab: out }]).fx, "attach")).toEqual([]);
  });

  it("does not attach again for a History API call that keeps the tab's URL (a router's state, scroll restoration)", () => {
    let { s } = run(state(AT_ONCE), [
      { type: "before_navigate", tab: tab(1) }, { type: "committed", tab: tab(1), at: 1_000, backForward: false },
      { type: "attached", tabId: 1 }, record(1, rec("r1")),
    ]);
    expect(s.idle.has(1)).toBe(true);
    let fx: Effect[];
    ({ s, fx } = run(s, [{ type: "history_state", tab: tab(1) }]));
    expect(of(fx, "attach")).toEqual([]);
    // a route that changes is one; the same route written again is not another
    const route = { ...tab(1), url: `${tab(1).url}?view=2` };
    ({ s, fx } = run(s, [{ type: "history_state", tab: route }]));
    expect(of(fx, "attach")).toEqual([expect.objectContaining({ tabId: 1, soft: route.url })]);
    ({ fx } = run({ ...s, attached: new Set(), idle: new Set([1]) }, [{ type: "history_state", tab: route }]));
    expect(of(fx, "attach")).toEqual([]);
  });

  it("does not detach a tab it is not attached to (a record flushed by a detach)", () => {
    const { fx } = run(state(), [record(1, rec("r1"))]);
    expect(of(fx, "detach")).toEqual([]);
    expect(of(fx, "timer")).toEqual([]);
  });

  const letGo = (fx: Effect[]): WorkerEvent[] => of(fx, "timer").map((t) => t.event).filter((e) => e.type === "let_go");

  it("holds a tab idle after its record for the settings' hold, then lets it go", () => {
    let { s, fx } = run(state({ ...ON, holdS: 12 }), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"))]);
    expect(of(fx, "detach")).toEqual([]);
    expect(of(fx, "timer")).toEqual([{ type: "timer", ms: 12_000, event: { type: "let_go", tabId: 1, token: 1 } }]);
    expect(s.attached.has(1)).toBe(true);
    const held = letGo(fx);
    // a tab sync meanwhile neither detaches nor attaches it
    ({ s, fx } = run(s, [{ type: "tabs", tabs: [tab(1)] }]));
    expect(types(fx).filter((t) => t === "attach" || t === "detach")).toEqual([]);
    ({ s, fx } = run(s, held));
    expect(of(fx, "detach")).toEqual([{ type: "detach", tabId: 1 }]);
    expect(s.idle.has(1)).toBe(true);
    expect(s.held.size).toBe(0);
  });

  it("a navigation within the hold keeps the tab: the old hold lets nothing go, the new record holds it again", () => {
    const first = run(state(), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"))]);
    const old = letGo(first.fx);
    for (const nav of [
      { type: "before_navigate", tab: { ...tab(1), url: "https://b.test/" } },
      { type: "committed", tab: { ...tab(1), url: "https://a.test/back" }, at: 1_000, backForward: true },
      { type: "history_state", tab: { ...tab(1), url: `${HTTPS}?route=2` } },
    ] as WorkerEvent[]) {
      let { s, fx } = run(first.s, [nav]);
      expect(of(fx, "attach")).toEqual([]);
      ({ s, fx } = run(s, old));
      expect(of(fx, "detach")).toEqual([]);
      expect(s.attached.has(1)).toBe(true);
      // that navigation's record holds it anew, and its own hold lets it go
      ({ s, fx } = run(s, [record(1, rec("r2"))]));
      const next = letGo(fx);
      expect(next).toEqual([{ type: "let_go", tabId: 1, token: 2 }]);
      expect(of(run(s, next).fx, "detach")).toEqual([{ type: "detach", tabId: 1 }]);
    }
  });

  it("a History API call that keeps the URL does not end the hold", () => {
    const first = run(state(), [
      { type: "before_navigate", tab: tab(1) }, { type: "committed", tab: tab(1), at: 1_000, backForward: false }, record(1, rec("r1")),
    ]);
    const { s } = run(first.s, [{ type: "history_state", tab: tab(1) }]);
    expect(of(run(s, letGo(first.fx)).fx, "detach")).toEqual([{ type: "detach", tabId: 1 }]);
  });

  it("a hold's end lets nothing go once the tab was detached, or in the lab", () => {
    const first = run(state(), [{ type: "before_navigate", tab: tab(1) }, record(1, rec("r1"))]);
    for (const gone of [{ type: "detached", tabId: 1 }, { type: "removed", tabId: 1 }] as WorkerEvent[]) {
      const { s, fx } = run(first.s, [gone, ...letGo(first.fx)]);
      expect(of(fx, "detach")).toEqual([]);
      expect(s.held.size).toBe(0);
    }
    const lab = run(state(), [{ type: "host", msg: hello(LAB) }, { type: "lab_tab", tabId: 9 }, record(9, rec("r1"))]);
    expect(letGo(lab.fx)).toEqual([]);
  });
});

describe("worker core: the pause switch", () => {
  const paused = (until: number | null) => run(state(), [
    { type: "before_navigate", tab: tab(1) }, { type: "pause", pause: { until } },
  ]);

  it("detaches every tab, shows the badge and sets a timer for the hour", () => {
    const { fx, s } = paused(T0 + HOUR_MS);
    expect(types(fx)).toEqual(["attach", "detach", "badge", "timer"]);
    expect(of(fx, "badge")[0]).toEqual({ type: "badge", paused: true, until: T0 + HOUR_MS });
    expect(of(fx, "timer")[0]?.ms).toBe(HOUR_MS);
    expect(s.attached.size).toBe(0);
  });

  it("attaches nothing and stores nothing while paused", () => {
    const { fx } = run(paused(null).s, [{ type: "before_navigate", tab: tab(2) }, record(1, rec("r1"))], T0 + 5 * HOUR_MS);
    expect(types(fx)).toEqual([]);
  });

  it("resumes by itself once the hour is over: clears the pause, the badge, re-attaches", () => {
    const s = paused(T0 + HOUR_MS).s;
    const { fx, s: after } = run(s, [{ type: "tick" }], T0 + HOUR_MS);
    expect(types(fx)).toEqual(["save_pause", "badge", "query_tabs"]);
    expect(after.pause).toBeNull();
    const { fx: fx2 } = run(after, [{ type: "before_navigate", tab: tab(1) }], T0 + HOUR_MS);
    expect(of(fx2, "attach")).toHaveLength(1);
  });

  it("an hour's pause still holds one ms before its end", () => {
    const { fx } = run(paused(T0 + HOUR_MS).s, [{ type: "before_navigate", tab: tab(1) }], T0 + HOUR_MS - 1);
    expect(types(fx)).toEqual([]);
  });

  it("resumes when turned back on", () => {
    const { fx } = run(paused(null).s, [{ type: "pause", pause: null }, { type: "before_navigate", tab: tab(3) }]);
    expect(types(fx)).toEqual(["badge", "query_tabs", "attach"]);
    expect(of(fx, "badge")[0]?.paused).toBe(false);
  });

  it("shows the pause at start-up without asking for tabs", () => {
    const s = initialState(ON, null, { until: null }, EMPTY_OUTBOX);
    expect(types(run(s, [{ type: "start" }]).fx)).toEqual(["badge"]);
    expect(types(run(state(), [{ type: "start" }]).fx)).toEqual(["badge", "query_tabs"]);
  });

  it("does not stop a lab profile (the host switches recording there)", () => {
    const s = run(initialState(ON, null, { until: null }, EMPTY_OUTBOX), [{ type: "host", msg: hello(LAB) }]).s;
    const { fx } = run(s, [{ type: "before_navigate", tab: tab(1) }]);
    expect(of(fx, "attach")).toHaveLength(1);
  });
});

describe("worker core: policies, arms in effect, the lab's start", () => {
  it("the lab's first URL waits for the host's policies, at most LAB_WAIT_MS, and starts once", () => {
    let { s, fx } = run(state(), [{ type: "host", msg: hello(LAB) }]);
    expect(of(fx, "timer")).toEqual([{ type: "timer", ms: LAB_WAIT_MS, event: { type: "lab_timeout" } }]);
    ({ s, fx } = run(s, [{ type: "host", msg: { type: "policies", schema: 1, rules: [], relay: null, error: null } }]));
    expect(types(fx)).toEqual(["apply_proxy"]);
    ({ s, fx } = run(s, [{ type: "proxy_applied", pac: false }]));
    expect(types(fx)).toEqual(["throttle", "lab_start"]);
    expect(of(fx, "lab_start")[0]).toMatchObject({ navigate: LAB.navigate, advance: "ack", startAtMs: null, hold: false });
    expect(types(run(s, [{ type: "lab_timeout" }]).fx)).toEqual([]);
  });

  it("a standby lab browser starts held, and the host's lab_go reaches the lab runner", () => {
    let { s, fx } = run(state(), [{ type: "host", msg: hello({ ...LAB, hold: true }) }, { type: "lab_timeout" }]);
    expect(of(fx, "lab_start")[0]).toMatchObject({ hold: true });
    ({ s, fx } = run(s, [{ type: "host", msg: { type: "lab_go", schema: 1, start_at_ms: 1_800_000_000_000 } }]));
    expect(fx).toEqual([{ type: "lab_go", startAtMs: 1_800_000_000_000 }]);
    expect(run(s, [{ type: "host", msg: { type: "lab_loaded", schema: 1 } }]).fx).toEqual([]);
  });

  it("the lab tab is recorded with the lab's quiet after load; without one, the recorder's default", () => {
    for (const quiet of [500, null]) {
      const s = run(state(), [{ type: "host", msg: hello({ ...LAB, quiet_ms: quiet }) }]).s;
      expect(of(run(s, [{ type: "lab_tab", tabId: 7 }]).fx, "attach")).toEqual([
        { type: "attach", tabId: 7, committed: false, source: "lab", urlDetail: "full", quietMs: quiet, visual: false,
          saveLog: false, soft: null }]);
    }
  });

  it("starts the lab at the timeout when no policies come", () => {
    const s = run(state(), [{ type: "host", msg: hello(LAB) }]).s;
    expect(types(run(s, [{ type: "lab_timeout" }]).fx)).toEqual(["lab_start"]);
  });

  it("one application at a time: a change while one runs is applied after it", () => {
    const exp = enrol(newExperiment(3), "a.test");
    let { s, fx } = run(state(ON, null), [{ type: "experiment", experiment: exp }]);
    expect(types(fx)).toEqual(["apply_proxy"]);
    ({ s, fx } = run(s, [{ type: "experiment", experiment: enrol(exp, "b.test") }]));
    expect(types(fx)).toEqual([]);
    ({ s, fx } = run(s, [{ type: "proxy_applied", pac: false }]));
    expect(types(fx)).toEqual(["throttle", "query_tabs", "apply_proxy"]);
  });

  it("asks the host for the relay once when enrolled without one", () => {
    const exp = enrol(newExperiment(3), "a.test");
    const { fx } = run(run(state(), [{ type: "host", msg: hello() }]).s, [
      { type: "experiment", experiment: exp }, { type: "proxy_applied", pac: false }, { type: "experiment", experiment: exp },
    ]);
    expect(of(fx, "send").map((e) => e.msg)).toEqual([{ type: "policies", schema: 1, want_relay: true }]);
  });

  it("an arm is in effect from the moment its proxy settings were set, none while switching", () => {
    const exp = enrol(newExperiment(3), "a.test");
    let s = run(state(), [{ type: "experiment", experiment: exp }], T0).s;
    expect(s.inEffect.get("a.test")).toEqual({ arm: null, since: T0 });
    s = run(s, [{ type: "proxy_applied", pac: true }], T0 + 50).s;
    expect(s.inEffect.get("a.test")).toEqual({ arm: pendingArm(exp, "a.test"), since: T0 + 50 });
  });

  it("a failed proxy setting leaves no arm in effect", () => {
    const exp = enrol(newExperiment(3), "a.test");
    const s = run(state(), [{ type: "experiment", experiment: exp }, { type: "proxy_applied", pac: null }]).s;
    expect(s.inEffect.get("a.test")?.arm).toBeNull();
  });

  it("an experiment load under its arm is recorded as such and advances the domain's count", () => {
    // a seed whose first arm for a.test is `default` (no relay needed)
    const seed = [...Array(50).keys()].find((n) => pendingArm(enrol(newExperiment(n), "a.test"), "a.test") === "default") ?? -1;
    const exp = enrol(newExperiment(seed), "a.test");
    const started = base.page.started_at_ms;
    let s = run(state(DEFAULT_SETTINGS, exp), [
      { type: "host", msg: { type: "policies", schema: 1, rules: [], relay: RELAY, error: null } },
    ], started - 1000).s;
    s = run(s, [{ type: "proxy_applied", pac: true }], started - 900).s;
    const { fx, s: after } = run(s, [record(1, rec("r1", "https://a.test:443"), true)], started + 5000);
    expect(of(fx, "save_experiment")[0]?.experiment?.counts["a.test"]).toBe(1);
    expect(of(fx, "show_record")[0]?.record).toMatchObject({ source: "experiment", experiment: { arm: "default" } });
    expect(after.experiment?.counts["a.test"]).toBe(1);
  });
});

describe("worker core: the first-run page", () => {
  it("opens after install once the host said this is no lab profile", () => {
    const { fx } = run(state(), [{ type: "installed" }, { type: "host", msg: hello() }, { type: "host", msg: hello() }]);
    expect(of(fx, "open_welcome")).toHaveLength(1);
  });

  it("never opens in a lab profile", () => {
    const { fx } = run(state(), [{ type: "installed" }, { type: "host", msg: hello(LAB) }]);
    expect(of(fx, "open_welcome")).toEqual([]);
  });

  it("opens when there is no host to ask (it says how to install one)", () => {
    const { fx } = run(state(), [{ type: "installed" }, { type: "host_down" }, { type: "host_down" }]);
    expect(of(fx, "open_welcome")).toHaveLength(1);
  });

  it("does not open on a mere restart (no install event)", () => {
    expect(of(run(state(), [{ type: "host", msg: hello() }]).fx, "open_welcome")).toEqual([]);
  });
});
