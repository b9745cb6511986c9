/** The fixture minifier keeps what the recorder reads and nothing private. */
import { describe, expect, it } from "vitest";
import { minify } from "../../src/cdp/minify.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import { readLog } from "../../scripts/fixture-io.ts";
import { options } from "./events.ts";

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

  it("is idempotent and does not change what the recorder makes of a fixture", () => {
    const log = readLog("h2");
    expect(minify(log)).toEqual(log);
    expect(fromLog(minify(log), options())).toEqual(fromLog(log, options()));
  });
});
