/**
 * src/replay/: reading a log's text in both layouts, Lighthouse's page session, bad input raising
 * only LogError, and the options a stored log carries.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogError, parseLog } from "../../src/replay/log-file.ts";
import { parseReplayOptions, replay } from "../../src/replay/replay.ts";
import { golden, readLog } from "../../scripts/fixture-io.ts";

const h2 = readLog("h2");

describe("parseLog", () => {
  it("reads one event per line and a JSON array alike", () => {
    const lines = h2.map((e) => JSON.stringify(e)).join("\n");
    expect(parseLog(lines)).toEqual(h2);
    expect(parseLog(JSON.stringify(h2, null, 2))).toEqual(h2);
    expect(parseLog("\uFEFF" + lines + "\n\n")).toEqual(h2);
  });

  it("drops the sessionId of Lighthouse's page target only", () => {
    const lh = [
      { method: "Page.loadEventFired", params: { timestamp: 1 }, sessionId: "ROOT", targetType: "page" },
      { method: "Page.loadEventFired", params: { timestamp: 2 }, sessionId: "CHILD", targetType: "iframe" },
      { method: "Page.loadEventFired", params: { timestamp: 3 }, sessionId: "CHILD" },
    ];
    expect(parseLog(JSON.stringify(lh)).map((e) => e.sessionId)).toEqual([undefined, "CHILD", "CHILD"]);
  });

  it("a Lighthouse-style log replays to the same records as the plain one", () => {
    const lh = h2.map((e) => (e.sessionId === undefined ? { ...e, sessionId: "ROOT", targetType: "page" } : e));
    const ids = golden("h2").map((r) => r.id);
    const env = { browser: { name: "Chromium", version: "fixture" }, extension_version: "0.0.0", network: null };
    const records = replay(parseLog(JSON.stringify(lh)), { env });
    expect(records.map((r) => r.id)).toEqual(ids);
    expect(records).toEqual(golden("h2"));
  });

  it.each([
    ["", "the log is empty"], ["  \n ", "the log is empty"], ["[]", "the log has no events"],
    ["{}", "line 1 has no method"], ["[1]", "event 1 is not an event object"], ["nope", "line 1 is not JSON"],
    ['{"method":"A.b","params":[]}', "line 1: params is not an object"], ['{"a":1}\n{', "line 1 has no method"],
    ["[{\"method\":\"A.b\"}", "the log is not JSON"],
  ])("refuses %j: %s", (text, why) => {
    expect(() => parseLog(text)).toThrow(new LogError(why).message);
  });

  it("raises nothing but LogError on any text", () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json(), fc.array(fc.json()).map((a) => a.join("\n"))), (text) => {
      try {
        parseLog(text);
      } catch (e) {
        expect(e).toBeInstanceOf(LogError);
      }
    }), { numRuns: 500 });
  });
});

describe("parseReplayOptions", () => {
  it("takes what a live session had", () => {
    const env = { browser: { name: "Chromium", version: "156" }, extension_version: "0.1.0", network: null };
    expect(parseReplayOptions({ source: "passive", url_detail: "origin", visual: false, quiet_ms: 500, main_frame_id: "F", id: "X", env }))
      .toEqual({ source: "passive", url_detail: "origin", visual: false, quiet_ms: 500, main_frame_id: "F", id: "X", env });
    expect(parseReplayOptions({ quiet_ms: null, main_frame_id: null })).toEqual({});
  });

  it.each([[[]], [null], [{ source: "web" }], [{ quiet_ms: -1 }], [{ visual: "yes" }], [{ extra: 1 }],
    [{ env: { browser: {} } }]])("refuses %j", (v) => {
    expect(() => parseReplayOptions(v)).toThrow();
  });

  it("the stored record's id goes to the first record, and the quiet period is the session's", () => {
    const log = readLog("h2");
    const [r] = replay(log, { id: "11111111-2222-4333-8444-555555555555" });
    expect(r?.id).toBe("11111111-2222-4333-8444-555555555555");
    // a 1 ms quiet period ends the record before the page's fetch after load (data/late.json)
    const short = replay(log, { quiet_ms: 1 })[0];
    expect(r?.requests.some((q) => q.url.includes("/data/late.json"))).toBe(true);
    expect(short?.requests.some((q) => q.url.includes("/data/late.json"))).toBe(false);
  });
});
