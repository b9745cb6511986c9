/**
 * Shrinks a raw CDP event stream to what the recorder reads, so a real session can become a
 * committed fixture: only allow-listed events and headers (no cookies, no auth, no tokens), no
 * initiator stacks, no certificate details.
 */
import { FRAME_EVENT, POLL_EVENT, type RawEvent } from "./raw-event.ts";

export const KEPT_METHODS: ReadonlySet<string> = new Set([
  "Network.requestWillBeSent", "Network.responseReceived", "Network.dataReceived",
  "Network.loadingFinished", "Network.loadingFailed", "Network.requestServedFromCache",
  "Page.loadEventFired", "Page.domContentEventFired", "Page.lifecycleEvent",
  "Page.frameNavigated", "Page.frameAttached", "Page.frameDetached",
  "Page.frameStartedLoading", "Page.frameStoppedLoading",
  "Target.attachedToTarget", "Target.detachedFromTarget", "Performance.metrics",
  "Runtime.bindingCalled", FRAME_EVENT, POLL_EVENT,
  "Network.webSocketCreated", "Network.webSocketWillSendHandshakeRequest",
  "Network.webSocketHandshakeResponseReceived", "Network.webSocketFrameReceived", "Network.webSocketClosed",
  "Network.webSocketFrameError",
  "Network.responseReceivedEarlyHints", "Page.navigatedWithinDocument", "Page.downloadWillBegin",
  "Page.javascriptDialogOpening", "Page.javascriptDialogClosed",
  "ServiceWorker.workerVersionUpdated",
  // wall-clock events: kept (without their arguments and stacks) so a replay shows they never
  // move the recorder's clock (src/cdp/event-clock.ts)
  "Runtime.consoleAPICalled", "Runtime.exceptionThrown",
]);

export const KEPT_HEADERS: ReadonlySet<string> = new Set([
  "content-type", "content-length", "content-encoding", "cache-control", "location", "alt-svc",
  "accept", "accept-encoding", "server", "date", "etag", "last-modified", "vary", "upgrade",
  "content-disposition", "link",
]);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const DROPPED_KEYS: ReadonlySet<string> = new Set([
  "initiator", "securityDetails", "postData", "postDataEntries", "headersText",
  "requestHeadersText", "associatedCookies", "cookiePartitionKey", "trustTokenParams",
  "args", "stackTrace", "exception",
  // a JavaScript dialog's text and what the user typed: the recorder reads only that it opened
  "message", "defaultPrompt", "userInput",
]);

function filterHeaders(h: Json): Json {
  if (h === null || typeof h !== "object" || Array.isArray(h)) return h;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(h)) {
    if (KEPT_HEADERS.has(k.toLowerCase())) out[k] = v;
  }
  return out;
}

function scrub(value: Json): Json {
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== "object") return value;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(value)) {
    if (DROPPED_KEYS.has(k)) continue;
    out[k] = k === "headers" || k === "requestHeaders" ? filterHeaders(v) : scrub(v);
  }
  return out;
}

/** Keeps recorder-relevant events, scrubbed; `rootSession` (a CDP client's page session) is
 * removed so the result looks like chrome.debugger's stream. */
export function minify(events: readonly RawEvent[], rootSession?: string): RawEvent[] {
  const out: RawEvent[] = [];
  for (const ev of events) {
    if (!KEPT_METHODS.has(ev.method)) continue;
    const params = scrub(ev.params as unknown as Json);
    const copy = { method: ev.method, params } as unknown as RawEvent;
    if (ev.sessionId !== undefined && ev.sessionId !== rootSession) copy.sessionId = ev.sessionId;
    out.push(copy);
  }
  return out;
}
