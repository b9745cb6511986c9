/**
 * The real-web fixtures' minifier (scripts/record-fixtures.ts, rw-* scenarios): the recorder's
 * own (src/cdp/minify.ts) plus the events the real-web behaviours are seen by.
 */
import { minify } from "../src/cdp/minify.ts";
import type { RawEvent } from "../src/cdp/raw-event.ts";

/** Events the recorder's minifier (src/cdp/minify.ts KEPT_METHODS) drops today but the real-web
 * behaviours are seen by: console and exceptions (their wall-clock `timestamp`), WebSockets and
 * EventSources, soft navigations, downloads, navigations a page schedules, Early Hints, bfcache.
 * Kept in the rw-* fixtures, scrubbed as minify scrubs the events it keeps. */
const RW_EXTRA: ReadonlySet<string> = new Set([
  "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded",
  "Network.webSocketCreated", "Network.webSocketWillSendHandshakeRequest",
  "Network.webSocketHandshakeResponseReceived", "Network.webSocketFrameReceived",
  "Network.webSocketFrameSent", "Network.webSocketClosed", "Network.eventSourceMessageReceived",
  "Network.responseReceivedEarlyHints", "Page.navigatedWithinDocument", "Page.downloadWillBegin",
  "Page.downloadProgress", "Browser.downloadWillBegin", "Browser.downloadProgress",
  "Page.frameRequestedNavigation", "Page.frameScheduledNavigation",
  "Page.frameClearedScheduledNavigation", "Page.backForwardCacheNotUsed",
  "Network.requestWillBeSentExtraInfo", "Network.responseReceivedExtraInfo",
]);

export function minifyRealweb(events: readonly RawEvent[], root: string): RawEvent[] {
  // minify keeps only its allow-list: an extra event passes under a kept name, then gets its own back
  const KEY = "__rwMethod";
  const disguised = events.map((ev) => RW_EXTRA.has(ev.method)
    ? ({ ...ev, method: "Page.frameAttached", params: { ...(ev.params as object), [KEY]: ev.method } } as unknown as RawEvent)
    : ev);
  return minify(disguised, root).map((ev) => {
    const params = ev.params as unknown as Record<string, unknown>;
    if (typeof params[KEY] !== "string") return ev;
    const { [KEY]: method, ...rest } = params;
    return { ...ev, method, params: rest } as unknown as RawEvent;
  });
}
