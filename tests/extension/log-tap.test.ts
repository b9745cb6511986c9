/**
 * The log tap (src/replay/log-tap.ts) on every real-Chromium fixture, driven as the extension's
 * adapter drives a tab (src/adapters/debugger.ts): events through TabSession.onEvent, a poll every
 * 50 ms of CDP time between them (the adapter's timer), close at the end. Each record's tapped
 * log, replayed with the session's options, must make that very record again.
 */
import { describe, expect, it } from "vitest";
import { goldenOptions, isLate, readLog, scenarios } from "../../scripts/fixture-io.ts";
import { monotonicTime } from "../../src/cdp/event-clock.ts";
import { FRAME_EVENT, POLL_EVENT, type RawEvent } from "../../src/cdp/raw-event.ts";
import { TabSession, type Flow } from "../../src/cdp/session.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { LogTap, MAX_EVENTS, logText, type TappedLog } from "../../src/replay/log-tap.ts";
import { parseLog } from "../../src/replay/log-file.ts";
import { replay } from "../../src/replay/replay.ts";

const POLL_S = 0.05;

/** A live tab over `events`: the records it made (in order) and the tap's logs; its timer goes
 * on polling `tailS` seconds past the last event before the tab is closed. */
function live(name: string, events: readonly RawEvent[], tailS = 0): { records: NavigationRecord[]; logs: TappedLog[] } {
  const records: NavigationRecord[] = [];
  const logs: TappedLog[] = [];
  const tap = new LogTap();
  const session: TabSession = new TabSession(goldenOptions(name), (ev) => tap.event(ev, session.recorder.active));
  const handOut = (rs: NavigationRecord[], busy: boolean): void => {
    records.push(...rs);
    logs.push(...tap.records(rs, busy));
  };
  const drive = (flow: Flow): void => {
    let step = flow.next();
    while (step.done !== true) {
      if (step.value.kind === "records") handOut(step.value.records, step.value.busy);
      // no browser behind it: every command fails (the fixture holds what its relays gave)
      step = flow.next(step.value.kind === "send" || step.value.kind === "decode" ? { ok: false, error: "replay" } : undefined);
    }
  };
  let clock: number | null = null;
  for (const ev of events) {
    const t = monotonicTime(ev);
    if (t !== null) {
      for (let p = (clock ?? t) + POLL_S; clock !== null && p < t; p += POLL_S) handOut(session.poll(p), session.recorder.active);
      clock = Math.max(clock ?? t, t);
    }
    drive(session.onEvent(ev, clock));
  }
  for (let p = (clock ?? 0) + POLL_S; clock !== null && p < clock + tailS; p += POLL_S) handOut(session.poll(p), session.recorder.active);
  handOut(session.close(), false);
  return { records, logs };
}

describe.each(scenarios())("log tap on fixture %s", (name) => {
  const { records, logs } = live(name, readLog(name));

  it("keeps one log per record", () => {
    expect(records.length).toBeGreaterThan(0);
    expect(logs.map((l) => l.record.id)).toEqual(records.map((r) => r.id));
  });

  it("each log replays to its record", () => {
    const o = goldenOptions(name);
    for (const { record, events, joined } of logs) {
      // through the stored form: JSON lines, read back as protolens replay reads them
      const again = replay(parseLog(logText(events)), {
        id: record.id, source: o.source, url_detail: o.urlDetail, visual: o.visual, env: o.env,
        ...(o.mainFrameId === undefined ? {} : { main_frame_id: o.mainFrameId }),
        ...(joined === true ? { joined } : {}),
      });
      expect(again).toEqual([record]);
    }
  });

  it("a log holds no other navigation's main document request", () => {
    let seen = 0;
    for (const { record, events } of logs) {
      const main = record.requests.filter((q) => q.is_main_document);
      const frame = main[0]?.frame_id;
      for (const e of events) {
        if (e.method !== "Network.requestWillBeSent" || e.sessionId !== undefined || e.params.type !== "Document" ||
            e.params.frameId !== frame) continue;
        expect(main.map((q) => q.request_id.split(":")[0])).toContain(e.params.requestId);
        seen += 1;
      }
    }
    // the late scenarios joined after the document request: their logs have none
    if (!isLate(name)) expect(seen).toBeGreaterThan(0);
  });
});

describe("log tap: a record its own clock ended (fixture rw-poll: a long poll, then silence)", () => {
  const { records, logs } = live("rw-poll", readLog("rw-poll"), 6);

  it("the live record ended at a timer poll, complete, and its log replays to it", () => {
    expect(records).toHaveLength(1);
    expect(records[0]?.page).toMatchObject({ incomplete: false, open_at_end: 1 });
    const [{ record, events }] = logs as [TappedLog];
    // the poll that completed it is the log's last event: a replay polls there too
    expect(events[events.length - 1]?.method).toBe(POLL_EVENT);
    const o = goldenOptions("rw-poll");
    const again = replay(parseLog(logText(events)), {
      id: record.id, source: o.source, url_detail: o.urlDetail, visual: o.visual, env: o.env,
      ...(o.mainFrameId === undefined ? {} : { main_frame_id: o.mainFrameId }),
    });
    expect(again).toEqual([record]);
    // without it the log ends at the poll's request, and a replay flushes the record unfinished
    const without = replay(parseLog(logText(events.slice(0, -1))), {
      id: record.id, source: o.source, url_detail: o.urlDetail, visual: o.visual, env: o.env,
      ...(o.mainFrameId === undefined ? {} : { main_frame_id: o.mainFrameId }),
    });
    expect(without[0]?.page.incomplete_reasons).toEqual(["unfinished_requests"]);
  });
});

describe("log tap: cuts", () => {
  const ev = (method: string, timestamp = 1): RawEvent => ({ method, params: { timestamp } } as unknown as RawEvent);
  const rec = { id: "r", requests: [] } as unknown as NavigationRecord;

  it("drops what came while idle but the starting event and the last frame before it", () => {
    const tap = new LogTap();
    const [a, f1, f2, start, x] = [ev("A.a"), ev(FRAME_EVENT), ev(FRAME_EVENT), ev("Start.s"), ev("X.x")];
    for (const e of [a, f1, f2, start]) tap.event(e, false);
    tap.event(x, true);
    expect(tap.records([rec], false)[0]?.events).toEqual([f2, start, x]);
  });

  it("leaves the next navigation's first event to it, and an event after the end to nobody", () => {
    const tap = new LogTap();
    const [start, x, next, after] = [ev("S.s"), ev("X.x"), ev("N.n"), ev("L.l")];
    tap.event(start, false);
    tap.event(x, true);
    tap.event(next, true);
    expect(tap.records([rec], true)[0]?.events).toEqual([start, x]);
    tap.event(after, true);
    expect(tap.records([rec], false)[0]?.events).toEqual([next, after]);
    tap.event(ev("Y.y"), false);
    expect(tap.records([rec], false)[0]?.events).toEqual([]);
  });

  it("gives no log to a record made from webNavigation alone (missed, a prerender's activation): no replay makes it", () => {
    const tap = new LogTap();
    const missed = { id: "m", requests: [], page: { late_attach: "missed" } } as unknown as NavigationRecord;
    const shown = { id: "p", requests: [], page: { kind: "prerender", late_attach: null } } as unknown as NavigationRecord;
    const [start, x] = [ev("S.s"), ev("X.x")];
    tap.event(start, false);
    tap.event(x, true);
    expect(tap.records([missed, shown], false)).toEqual([]);
    // the events stay for the record they belong to
    expect(tap.records([missed, rec], false).map((l) => [l.record.id, l.events])).toEqual([["r", [start, x]]]);
  });

  it("keeps no log past MAX_EVENTS, and starts afresh after", () => {
    const tap = new LogTap();
    for (let i = 0; i <= MAX_EVENTS; i++) tap.event(ev("A.a"), true);
    expect(tap.records([rec], false)).toEqual([]);
    tap.event(ev("B.b"), false);
    expect(tap.records([rec], false)).toHaveLength(1);
  });
});
