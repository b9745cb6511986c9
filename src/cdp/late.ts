/**
 * A navigation whose start the recorder missed because chrome.debugger was attached late (the
 * first navigation of a new tab: a chrome://newtab tab cannot be attached at all, and an attach
 * at webNavigation.onBeforeNavigate lands after the main document's Network.requestWillBeSent;
 * measured on Chromium 156, docs/RECORD.md "Late attach"). Two cases, by the first event seen:
 *
 * - "response": the main document's Network.responseReceived (requestId = loaderId) arrives with
 *   nothing open. Its request start is `response.timing.requestTime` (same monotonic clock); the
 *   method and any redirects are not on the wire.
 * - "commit": the attach came after the commit; Page.setLifecycleEventsEnabled replays the main
 *   frame's `commit` lifecycle event (original timestamp, loaderId). The main document's entry
 *   comes from the page's own Navigation Timing, which the adapter relays after the load event
 *   as a Runtime.bindingCalled event named NAV_TIMING_BINDING (no binding of that name exists
 *   in any page, so a page cannot send one): protocol, status, body bytes, times; never a
 *   connection id or remote endpoint.
 */
import type { Protocol } from "devtools-protocol";
import { headerOf, type Hop } from "./request-state.ts";
import type { RawEvent } from "./raw-event.ts";

export type { LateAttach } from "../record/types.ts";

export const NAV_TIMING_BINDING = "__protolensNavigationTiming";

/** Evaluated in the adapter's isolated world (the page cannot replace `performance` there). The
 * first contentful paint too: a paint before the attach's `Page.setLifecycleEventsEnabled` is not
 * always in its replay (measured: a script redirect's landing page, joined late, had its load
 * event and no firstContentfulPaint), and the page's own paint timing still has it. */
export const NAV_TIMING_EXPRESSION =
  "JSON.stringify({ timeOrigin: performance.timeOrigin, entry: performance.getEntriesByType('navigation')[0]?.toJSON() ?? null, " +
  "fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null })";

/** What the recorder reads from one PerformanceNavigationTiming entry (ms after timeOrigin). */
export interface NavTiming {
  loaderId: string;
  /** performance.timeOrigin, epoch ms. */
  timeOrigin: number;
  url: string;
  protocol: string;
  status: number;
  contentType: string;
  fetchStart: number;
  responseStart: number;
  responseEnd: number;
  transferSize: number;
  encodedBodySize: number;
  decodedBodySize: number;
  /** The first contentful paint's startTime (ms after timeOrigin); null: none yet. */
  fcp: number | null;
  /** Served from a speculation rule's prefetch (`deliveryType` "navigational-prefetch", Navigation
   * Timing Level 2): the bytes crossed the wire in the prefetching page's load, not in this one. */
  prefetched: boolean;
  /** Served from the cache after a revalidation (`revalidated`): the wire carried a 304 and no
   * body; the body shown is the cache's. */
  revalidated: boolean;
  /** Answered by a service worker (`fromWorker`): its bytes crossed the wire in the worker's own
   * fetch, which the tab's session does not see. */
  fromServiceWorker: boolean;
}

/** Chromium's fixed guess at a response's header size in Resource Timing's `transferSize`: a
 * response fetched over the network reports its encoded body plus this, one served from the cache
 * after a revalidation this alone, one from the cache without asking 0 (Resource Timing Level 2
 * "transferSize", Chromium's `kHeaderSize`). Measured on Chromium 156 (/reval/ loaded three
 * times, 2026-11-29): the network load 842 = 542 + 300; the revalidated one (caddy logged 304)
 * 300, with `responseStatus` 200 and `encodedBodySize` 542, the cached body's. */
export const TRANSFER_HEADER_GUESS = 300;

/** A document a service worker answered: a worker was started for its fetch (`workerStart`) and
 * no network protocol is named. Measured on Chromium 156 (fixture sw-controlled-joined-late, the
 * real-web /sw/ page's controlled load): workerStart 9.8, nextHopProtocol "", where the response
 * event says fromServiceWorker. A worker that lets the request go to the network (no
 * respondWith) should name the network's protocol, and the document is then the network's: that
 * case was not measured here. */
export function fromWorker(t: Pick<NavTiming, "protocol"> & { workerStart: number | null }): boolean {
  return (t.workerStart ?? 0) > 0 && t.protocol === "";
}

/** A document the cache served after the server said 304 Not Modified: its transferSize is the
 * header guess alone, though it has a body. An empty body revalidated cannot be told from an
 * empty one fetched (both 300): it keeps the status Chromium reports. */
export function revalidated(t: Pick<NavTiming, "transferSize" | "encodedBodySize">): boolean {
  return t.transferSize === TRANSFER_HEADER_GUESS && t.encodedBodySize > 0;
}

/** The relayed result as an event; `json` is NAV_TIMING_EXPRESSION's value, `loaderId` the main
 * frame's current loader (Page.getFrameTree), so it is matched to the right document. */
export function navTimingEvent(loaderId: string, json: string): RawEvent {
  return {
    method: "Runtime.bindingCalled",
    params: { name: NAV_TIMING_BINDING, payload: JSON.stringify({ loaderId, result: json }), executionContextId: 0 },
  };
}

const num = (o: Record<string, unknown>, k: string): number | null => {
  const v = o[k];
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
};
const str = (o: Record<string, unknown>, k: string): string | null => (typeof o[k] === "string" ? o[k] : null);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Parses navTimingEvent's payload; null for anything malformed. */
export function parseNavTiming(payload: string): NavTiming | null {
  try {
    const outer: unknown = JSON.parse(payload);
    if (!isObj(outer) || typeof outer.loaderId !== "string" || typeof outer.result !== "string") return null;
    const inner: unknown = JSON.parse(outer.result);
    if (!isObj(inner) || !isObj(inner.entry)) return null;
    const e = inner.entry;
    const timeOrigin = num(inner, "timeOrigin");
    const url = str(e, "name");
    const fields = ["fetchStart", "responseStart", "responseEnd", "transferSize", "encodedBodySize", "decodedBodySize",
      "responseStatus"].map((k) => num(e, k));
    const [fetchStart, responseStart, responseEnd, transferSize, encodedBodySize, decodedBodySize, status] = fields;
    if (timeOrigin === null || url === null || fetchStart == null || responseStart == null || responseEnd == null ||
        transferSize == null || encodedBodySize == null || decodedBodySize == null || status == null) return null;
    const protocol = str(e, "nextHopProtocol") ?? "";
    return {
      loaderId: outer.loaderId, timeOrigin, url, protocol,
      status, contentType: str(e, "contentType") ?? "", fetchStart, responseStart, responseEnd,
      transferSize, encodedBodySize, decodedBodySize, fcp: num(inner, "fcp"),
      prefetched: str(e, "deliveryType") === "navigational-prefetch",
      revalidated: revalidated({ transferSize, encodedBodySize }),
      fromServiceWorker: fromWorker({ protocol, workerStart: num(e, "workerStart") }),
    };
  } catch {
    return null;
  }
}

/** A hop from a response seen without its request: the main document's ("response" case) or,
 * in a late navigation, a subresource requested before the renderer's agent was enabled. */
export function hopFromResponse(p: Protocol.Network.ResponseReceivedEvent, isMain: boolean): Hop {
  const r = p.response;
  const start = r.timing && r.timing.requestTime > 0 ? r.timing.requestTime : p.timestamp;
  return {
    requestId: p.requestId, hop: 0, url: r.url, method: "", type: p.type, frameId: p.frameId ?? null,
    priority: null, start, response: r, responseAt: p.timestamp, end: null, encodedBytes: 0, bodyBytes: 0,
    servedFromCache: false, failure: null, isMain, fromTiming: null,
  };
}

/** Epoch seconds at `t0` (the response's request start) from the response's own wall clock:
 * `responseTime` is when its headers arrived, `receiveHeadersEnd` ms after requestTime. */
export function wallFromResponse(r: Protocol.Network.Response, t0: number, fallback: number): number {
  if (r.responseTime === undefined || !r.timing || r.timing.requestTime <= 0) return fallback;
  return r.responseTime / 1000 - (r.timing.requestTime + r.timing.receiveHeadersEnd / 1000 - t0);
}

/** No byte of the document's body crossed the wire in this load's own requests: a prefetch
 * brought it earlier, the cache had it (304), or a service worker's fetch brought it (a fully seen
 * worker-answered document's loadingFinished says 0 too, fixture rw-sw). */
function noWireBody(t: NavTiming): boolean {
  return t.prefetched || t.revalidated || t.fromServiceWorker;
}

/** Completes a main document hop whose Network.loadingFinished was missed (its body ended
 * before the renderer's agent was enabled) from Navigation Timing; body bytes only. */
export function endFromTiming(h: Hop, t: NavTiming, zero: number): void {
  // a document from a prefetch ends at its response's start (hopFromTiming)
  const end = t.responseEnd > 0 ? t.responseEnd : t.prefetched ? t.responseStart : 0;
  if (h.end !== null || end <= 0) return;
  h.end = zero + end / 1000;
  h.encodedBytes = noWireBody(t) ? 0 : t.encodedBodySize;
  if (h.bodyBytes === 0) h.bodyBytes = t.decodedBodySize;
}

/** The wire bytes of a document whose end was missed, from its head's count and its body's size.
 * Over HTTP/2 and HTTP/3 a response head's encodedDataLength is what its stream had read by
 * then, which holds the whole body when the body came with it: measured on Chromium 156, an
 * iframe document whose end was missed (fixture oopif/doc-end-missed) had 480 at its head for a
 * 328-byte body, the whole response; the same document fully seen had 143 at its head and 480
 * at its end (fixture h2). Counting the body again put 260 bytes too many on a nested frame's h2
 * connection against the NetLog (CI run 36). There a head larger than the body holds it and a
 * smaller one is the headers alone; two cases are then miscounted: a body smaller than its own
 * headers that came after them is left out (at most its size), and a head that brought part of
 * a larger body (seen for 16 KB images, not for a document whose end was missed) counts that
 * part twice. Over HTTP/1.1 the head's count is its headers' alone (fixture h1: 277 at the head
 * of the frame, 605 at its end; the lab's nested 260-byte frame document, joined by its frame's
 * timing in 4 loads of 4, would have been 277 with the rule above). */
export function frameDocumentBytes(atHead: number, body: number, protocol: string | undefined): number {
  const headHoldsBody = protocol !== "http/1.1" && protocol !== "http/1.0" && atHead > body;
  if (headHoldsBody) return Math.round(atHead);
  // over HTTP/2 the body came in DATA frames, each with a 9-byte header, of at most 16,384 bytes
  // unless the browser allows more (RFC 9113 4.1, 4.2; Chromium does not): the fixtures' 143 and
  // 42 at the head end at 480 and 379 with the 328-byte body. A server's smaller frames (or a
  // QUIC stream's DATA frame headers, 2 to 9 bytes, for HTTP/3) stay under the wire.
  const frames = protocol === "h2" ? Math.ceil(body / H2_MAX_FRAME) * H2_FRAME_HEADER : 0;
  return Math.round(atHead + body + frames);
}

const H2_FRAME_HEADER = 9;
const H2_MAX_FRAME = 16_384;

/** The wire bytes of a dedicated worker's script, whose end Chromium counts as its head alone:
 * the script is fetched for the page (request-state.ts `workerScript`), and its response and end
 * come on the worker's target with connectionId 0, the body's chunk with encodedDataLength 0 and
 * loadingFinished with the head's encodedDataLength again. Measured on Chromium 156 (/workers/,
 * a 68-byte script, 3 loads a protocol, scripts/record-fixtures.ts rw-workers and rw-workers-h1):
 * over HTTP/1.1, 282 at the head and at the end, where the NetLog has the 282 bytes of its
 * header lines and the 68 of its body (the real-web lab's HTTP/1.1 connection 68 bytes over its
 * records, 3 CI runs); over HTTP/2, 55 and 55 twice, and 132 and 132 once (the body came with
 * the head). The body's wire size is its Content-Length, or without a content coding the decoded
 * body's; then as frameDocumentBytes. `null` for any other request, and when the end counted
 * more than the head or the body's size is not known (a coded body without a Content-Length). */
export function workerScriptBytes(h: Hop, atEnd: number): number | null {
  const r = h.response;
  if (h.workerScript !== true || r === null || r.connectionId !== 0 || r.fromDiskCache === true ||
    r.fromServiceWorker === true || r.fromPrefetchCache === true || h.notModified === true) return null;
  if (r.encodedDataLength <= 0 || Math.round(atEnd) !== Math.round(r.encodedDataLength) || h.bodyBytes <= 0) return null;
  const length = Number(headerOf(r.headers, "content-length") ?? Number.NaN);
  const coding = headerOf(r.headers, "content-encoding");
  const body = Number.isInteger(length) && length >= 0 ? length
    : coding === undefined || coding === "identity" ? h.bodyBytes : null;
  return body === null ? null : frameDocumentBytes(r.encodedDataLength, body, r.protocol);
}

/** Completes an out-of-process iframe's document hop whose Network.loadingFinished never came:
 * its body can end before the child session's Network.enable takes effect (the frame's target is
 * attached when the navigation is ready to commit; measured on Chromium 156: about 1 load in 6 of
 * a page with a cross-site iframe, neither session carried the document's loadingFinished). The
 * adapter relays the frame's own Navigation Timing at its load event (session.ts): the end maps
 * from the frame's timeOrigin (epoch ms) through the record's epoch zero; the bytes are
 * frameDocumentBytes'. */
export function endFromFrameTiming(h: Hop, t: NavTiming, zero: number, zeroWall: number): void {
  if (h.end !== null || t.responseEnd <= 0) return;
  const end = zero + ((t.timeOrigin + t.responseEnd) / 1000 - zeroWall);
  h.end = Math.max(end, h.responseAt ?? h.start);
  h.encodedBytes = frameDocumentBytes(h.response?.encodedDataLength ?? 0, t.encodedBodySize, h.response?.protocol);
  if (h.bodyBytes === 0) h.bodyBytes = t.decodedBodySize;
  h.endFromFrame = true;
}

/** The main document's hop from Navigation Timing ("commit" case); `zero` = timeOrigin in CDP
 * seconds. encoded bytes are the body's only (transferSize adds a fixed 300-byte header guess); a
 * revalidated document's are 0 and its status the wire's 304 (Chromium reports the cached 200).
 * A document from a speculation rule's prefetch: no byte of it crossed the wire in this load (the
 * prefetching page's record has them, its request of type Prefetch), and its responseEnd is 0
 * (Chromium 156): it ends at its response's start, when the prefetch handed it over. */
export function hopFromTiming(t: NavTiming, frameId: string, zero: number): Hop {
  const at = (msAfterOrigin: number): number => zero + msAfterOrigin / 1000;
  const end = t.responseEnd > 0 ? t.responseEnd : t.prefetched && t.responseStart > 0 ? t.responseStart : null;
  return {
    requestId: t.loaderId, hop: 0, url: t.url, method: "", type: "Document", frameId, priority: null,
    start: at(t.fetchStart), response: null, responseAt: t.responseStart > 0 ? at(t.responseStart) : null,
    end: end === null ? null : at(end), encodedBytes: noWireBody(t) ? 0 : t.encodedBodySize,
    bodyBytes: t.decodedBodySize,
    // Chromium reports transferSize 0 for a response from the HTTP cache
    servedFromCache: t.transferSize === 0 && t.decodedBodySize > 0, failure: null, isMain: true,
    fromTiming: { protocol: t.protocol, status: t.status, mimeType: t.contentType, prefetched: t.prefetched,
      fromServiceWorker: t.fromServiceWorker },
    ...(t.revalidated ? { notModified: true } : {}),
  };
}
