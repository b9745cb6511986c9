/** An out-of-process iframe's document whose Network.loadingFinished never came (src/cdp/late.ts
 * endFromFrameTiming). The log is real: the extension's log tap in the experiment e2e
 * (tests/e2e/test_experiment_e2e.py, Chromium 156, everyday mode), a page on a.test with a
 * b.test iframe whose document response came on the tab's session and whose body ended before the
 * iframe's session had Network enabled: no session carried its dataReceived or loadingFinished
 * (about 1 load in 6). The browser's replies to the relay are chosen here (the session core is
 * stepped as session.test.ts steps it); the e2e holds the whole path to caddy's log. */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHILD_COMMANDS } from "../../src/cdp/enable-commands.ts";
import { NAV_TIMING_EXPRESSION, frameDocumentBytes } from "../../src/cdp/late.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { TabSession, type Flow, type Io, type Reply } from "../../src/cdp/session.ts";
import type { NavigationRecord } from "../../src/record/types.ts";

const LOG = join(import.meta.dirname, "../fixtures/oopif/doc-end-missed.jsonl");
const CHILD = "B03CDD00BCE44D26250C59739245D8BD";
const FRAME = "680B5EA1BB1B46A10BB3A5692B69A840";
const DOC = "22BD495B22516DA63E03121B64BB009D"; // the iframe document's request id = its loader's

const events = (): RawEvent[] => readFileSync(LOG, "utf8").split("\n").filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as RawEvent);

/** Replays the log through a session; `timing` answers the child's Navigation Timing relay
 * (null: the child session is gone, every relay command fails); `after`: events fed right after
 * the frame's load event. */
function replay(timing: object | null, after: RawEvent[] = [],
  keep: (ev: RawEvent) => boolean = () => true): { records: NavigationRecord[]; asked: string[] } {
  const s = new TabSession({
    source: "passive", urlDetail: "origin", newId: () => "id", mainFrameId: "E301B1B335E267AF30404A8ADFC85ECD",
    env: { browser: { name: "Chromium", version: "156" }, extension_version: "0", network: null },
  });
  const records: NavigationRecord[] = [];
  const asked: string[] = [];
  const answer = (w: Io & { kind: "send" }): Reply => {
    // the tab's own relays: their results are in the log already (the tap keeps relayed events)
    if (w.sessionId !== CHILD) return w.method === "Performance.getMetrics" ? { ok: true, result: { metrics: [] } } : { ok: false, error: "logged" };
    if (CHILD_COMMANDS.some((c) => c.method === w.method && w.method !== "Runtime.evaluate")) return { ok: true, result: {} };
    asked.push(w.method);
    if (timing === null) return { ok: false, error: "No session with given id" };
    if (w.method === "Page.getFrameTree") return { ok: true, result: { frameTree: { frame: { id: FRAME, loaderId: DOC } } } };
    if (w.method === "Page.createIsolatedWorld") return { ok: true, result: { executionContextId: 9 } };
    expect(w.params).toMatchObject({ expression: NAV_TIMING_EXPRESSION, contextId: 9 });
    return { ok: true, result: { result: { type: "string", value: JSON.stringify(timing) } } };
  };
  const drive = (flow: Flow): void => {
    let step = flow.next();
    while (step.done !== true) {
      if (step.value.kind === "records") records.push(...step.value.records);
      step = flow.next(step.value.kind === "send" ? answer(step.value) : undefined);
    }
  };
  for (const ev of events().filter(keep)) {
    drive(s.onEvent(ev));
    if (ev.method === "Page.loadEventFired" && ev.sessionId === CHILD) for (const a of after) drive(s.onEvent(a));
  }
  records.push(...s.close());
  return { records, asked };
}

const docOf = (r: NavigationRecord): NavigationRecord["requests"][number] | undefined =>
  r.requests.find((q) => q.resource_type === "Document" && !q.is_main_document);

describe("an iframe document's end the events never gave", () => {
  it("without the relay the record says a request never ended (the log as it was recorded)", () => {
    const { records, asked } = replay(null);
    expect(asked[0]).toBe("Page.getFrameTree");
    const [rec] = records;
    expect(rec && docOf(rec)).toMatchObject({ end_ms: null, status: 200 });
    expect(rec?.page.incomplete_reasons).toContain("unfinished_requests");
  });

  it("is completed from the frame's own Navigation Timing, relayed at the frame's load", () => {
    const started = replay(null).records[0]?.page.started_at_ms ?? NaN;
    // the frame's clock: its timeOrigin 160 ms after the record's zero, its response ending 12.5
    // ms after that (the logged response headers came at 168.6 ms, the frame's load at 326 ms)
    // (the body's size is the logged response's content-length)
    const entry = { name: "https://b.test:51441/frame/", nextHopProtocol: "h2", responseStatus: 200, contentType: "text/html",
      fetchStart: 0.5, responseStart: 1.2, responseEnd: 12.5, transferSize: 628, encodedBodySize: 328, decodedBodySize: 328 };
    const { records, asked } = replay({ timeOrigin: started + 160, entry });
    expect(asked).toEqual(["Page.getFrameTree", "Page.createIsolatedWorld", "Runtime.evaluate"]);
    const [rec] = records;
    const doc = rec && docOf(rec);
    // within 0.5 ms: the frame's end maps through the request's wallTime when it comes, the
    // record's zero through the page's timeOrigin relayed later (they differ by 0.14 ms here)
    expect(doc?.end_ms).toBeCloseTo(172.5, 0);
    // the logged response's head had read 480 bytes, more than its 328-byte body: the whole
    // response (the same document fully seen: 143 at its head, 480 at its end, fixture h2)
    expect(doc?.encoded_bytes).toBe(480);
    expect(rec?.page.incomplete).toBe(false);

    // the wire's own end, should it come after the relay after all, replaces the frame's
    const late: RawEvent = { method: "Network.loadingFinished", sessionId: CHILD,
      params: { requestId: DOC, timestamp: 26971.048, encodedDataLength: 1700 } };
    const [again] = replay({ timeOrigin: started + 160, entry }, [late]).records;
    const doc2 = again && docOf(again);
    expect(doc2?.encoded_bytes).toBe(1700);
    expect(doc2?.end_ms).toBeCloseTo(169.7, 0); // its own time (the zero at 26970.8783 s)
  });

  it("is relayed at the page's load when the frame's own load event is not seen", () => {
    // the frame's load can come before its session's Page.enable (a CI run: no relay, the
    // record incomplete); the page's load waits for every frame's
    const started = replay(null).records[0]?.page.started_at_ms ?? NaN;
    const entry = { name: "https://b.test:51441/frame/", nextHopProtocol: "h2", responseStatus: 200, contentType: "text/html",
      fetchStart: 0.5, responseStart: 1.2, responseEnd: 12.5, transferSize: 628, encodedBodySize: 328, decodedBodySize: 328 };
    const noFrameLoad = (ev: RawEvent): boolean => !(ev.method === "Page.loadEventFired" && ev.sessionId === CHILD);
    const { records, asked } = replay({ timeOrigin: started + 160, entry }, [], noFrameLoad);
    expect(asked).toEqual(["Page.getFrameTree", "Page.createIsolatedWorld", "Runtime.evaluate"]);
    const doc = records[0] && docOf(records[0]);
    expect(doc?.end_ms).toBeCloseTo(172.5, 0);
    expect(records[0]?.page.incomplete).toBe(false);
  });
});

describe("the wire bytes of a frame document whose end was missed", () => {
  // the b.test frame's document (a 328-byte body) as the fixtures logged it, its head's count and
  // its end's: over h2 its head alone, first on its connection (fixture h2) and after another
  // response (warm: HPACK), and its head with the body (oopif/doc-end-missed, aborted); over
  // HTTP/1.1 its head (fixture h1), whose count never holds the body
  it.each([["h2", 143, 480], ["h2", 42, 379], ["h2", 480, 480], ["http/1.1", 277, 605]])(
    "%s: a head of %i bytes is a wire end of %i", (protocol, head, end) => {
      expect(frameDocumentBytes(head, 328, protocol)).toBe(end);
    });

  it("counts an HTTP/2 DATA frame header per 16,384 bytes of a body its head did not hold", () => {
    expect(frameDocumentBytes(40, 16_384, "h2")).toBe(40 + 16_384 + 9);
    expect(frameDocumentBytes(40, 16_385, "h2")).toBe(40 + 16_385 + 18);
    expect(frameDocumentBytes(40, 16_385, "h3")).toBe(40 + 16_385);
  });

  it("over HTTP/1.1 the body is added to a head larger than it (the lab's nested frame)", () => {
    // c.test's nested.html: a 260-byte body under a 277-byte head, read from its frame's timing
    expect(frameDocumentBytes(277, 260, "http/1.1")).toBe(537);
    expect(frameDocumentBytes(277, 260, "h2")).toBe(277); // over h2 such a head holds the body
  });
});
