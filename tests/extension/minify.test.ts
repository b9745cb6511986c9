/** The fixture minifier keeps what the recorder reads and nothing private. */
import { describe, expect, it } from "vitest";
import { minify } from "../../src/cdp/minify.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import { readLog } from "../../scripts/fixture-io.ts";
import { options } from "./events.ts";

/** Puts back what Chromium sends and minify drops: cookies and auth headers, initiators,
 * certificate details and the extra-info events (a chrome.debugger stream has no root session
 * id, so none is added). */
function rawFrom(log: readonly RawEvent[]): RawEvent[] {
  const out: RawEvent[] = [];
  for (const ev of log) {
    const params = structuredClone(ev.params) as unknown as Record<string, unknown>;
    const request = params["request"] as { headers?: Record<string, unknown> } | undefined;
    const response = params["response"] as { headers?: Record<string, unknown> } | undefined;
    if (request) request.headers = { ...request.headers, Cookie: "sid=secret" };
    if (response) response.headers = { ...response.headers, "Set-Cookie": "sid=secret" };
    if (ev.method === "Network.requestWillBeSent") params["initiator"] = { type: "parser", stack: {} };
    if (response) (response as Record<string, unknown>)["securityDetails"] = { protocol: "TLS 1.3" };
    out.push({ ...ev, params } as unknown as RawEvent);
    if (ev.method === "Network.responseReceived") {
      const extra = { method: "Network.responseReceivedExtraInfo", params: { requestId: params["requestId"], headers: { "set-cookie": "sid=secret" } } };
      out.push((ev.sessionId === undefined ? extra : { ...extra, sessionId: ev.sessionId }) as unknown as RawEvent);
    }
  }
  return out;
}

describe("minify", () => {
  const raw = [
    { method: "Network.requestWillBeSent", sessionId: "ROOT", params: { requestId: "1", request: { url: "https://a.test/", headers: { Cookie: "s=1", Accept: "*/*" } }, initiator: { stack: {} } } },
    { method: "Network.responseReceivedExtraInfo", params: { requestId: "1", headers: { "set-cookie": "s=2" } } },
    { method: "Network.responseReceived", sessionId: "CHILD", params: { requestId: "1", response: { headers: { Authorization: "t", "Content-Type": "text/html" }, securityDetails: {} } } },
  ] as unknown as RawEvent[];

  it("drops cookies, auth, extra-info events and the root session id", () => {
    const out = minify(raw, "ROOT");
    expect(out.map((e) => [e.method, e.sessionId])).toEqual([["Network.requestWillBeSent", undefined], ["Network.responseReceived", "CHILD"]]);
    const text = JSON.stringify(out);
    for (const secret of ["Cookie", "s=1", "s=2", "Authorization", "securityDetails", "initiator"]) expect(text).not.toContain(secret);
    expect(text).toContain("Content-Type");
  });

  it("is idempotent on a committed (already minified) fixture", () => {
    const log = readLog("h2");
    expect(log.length).toBeGreaterThan(0);
    expect(minify(log)).toEqual(log);
  });

  it("does not change what the recorder makes of an unminified raw log", () => {
    // the raw log as Chromium sends it: a committed fixture with the fields minify drops put
    // back (extra-info events, root session ids, initiators, security details, cookies)
    const unminified = rawFrom(readLog("h2"));
    const out = minify(unminified);
    expect(out).not.toEqual(unminified);
    expect(out.length).toBeLessThan(unminified.length);
    expect(minify(out)).toEqual(out);
    const record = fromLog(unminified, options());
    expect(record.length).toBeGreaterThan(0);
    expect(fromLog(out, options())).toEqual(record);
  });
});
