/**
 * Network domain handlers: requests, their redirect hops, responses, bytes and ends. A main-frame
 * document request starts a navigation (ending the one before); every other http(s) request of
 * the tab (any frame, any session) joins the current one. Each handler returns the records it
 * completed.
 */
import { hopFromResponse, wallFromResponse, workerScriptBytes } from "../late.ts";
import { Navigation } from "../navigation.ts";
import type { EventOf, RawEvent } from "../raw-event.ts";
import { endByRedirect, fromPrefetch, headerOf, isLongLived, newHop, type Hop } from "../request-state.ts";
import { isHttp, type TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

/** Network activity restarts the quiet of the navigation the request belongs to, except a
 * long-lived stream's; it is the request's latest event (navigation.ts longPolls). */
function activity(s: TabState, ev: RawEvent, h: Hop, at: number): void {
  if (h.lastAt === undefined || at > h.lastAt) h.lastAt = at;
  if (!isLongLived(h)) s.ownerOf(ev, h.requestId)?.touch(at);
}

export function onRequestWillBeSent(s: TabState, ev: EventOf<"Network.requestWillBeSent">): Out {
  const p = ev.params;
  s.wallOffset = p.wallTime - p.timestamp;
  if (s.nav !== null && Number.isNaN(s.nav.wallTime) && s.nav.kind !== "navigation") s.nav.wallTime = s.nav.t0 + s.wallOffset;
  const k = s.key(ev, p.requestId);
  const owner = [s.nav, s.pending].find((n) => n?.requests.has(k)) ?? null;
  const prev = owner?.requests.get(k);
  const last = prev?.[prev.length - 1];
  if (owner && prev && last && p.redirectResponse) {
    endByRedirect(last, p.redirectResponse, p.timestamp);
    prev.push(newHop(p, last.hop + 1, last.isMain));
    owner.touch(p.timestamp);
    return [];
  }
  if (s.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId, p.documentURL, p.request.url)) {
    return startNavigation(s, ev, k);
  }
  const nav = s.navFor(p.loaderId);
  if (nav && isHttp(p.request.url) && !prev) {
    const hop = newHop(p, 0, false);
    nav.requests.set(k, [hop]);
    if (nav === s.nav && !s.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
    if (!isLongLived(hop)) nav.touch(p.timestamp);
  } else if (!nav && s.joined && isHttp(p.request.url) && !s.orphans.has(k)) {
    s.addOrphan(k, [newHop(p, 0, false)]);
  }
  return [];
}

/** A request seen while no navigation was recorded (TabState.orphans), or undefined. */
function orphan(s: TabState, ev: RawEvent, requestId: string): Hop | undefined {
  const hops = s.orphans.get(s.key(ev, requestId));
  return hops?.[hops.length - 1];
}

/** A navigation's response the browser saves instead of showing (RFC 6266 section 4.2): how a
 * download shows in the tab's events when Page.downloadWillBegin does not come. */
function isAttachment(h: Hop): boolean {
  if (h.response === null || h.servedFromCache) return false;
  const cd = headerOf(h.response.headers, "content-disposition");
  return cd !== undefined && /^\s*attachment/i.test(cd);
}

/** A main-frame document request. While the current document is shown (committed), the new
 * navigation waits as pending until its own document commits; otherwise it replaces the current
 * one at once (a navigation that had not committed yet is abandoned). */
function startNavigation(s: TabState, ev: EventOf<"Network.requestWillBeSent">, k: string): Out {
  const p = ev.params;
  // a redirect's next hop with no earlier hop seen: attached during the redirect chain
  const next = new Navigation(p.timestamp, p.wallTime, p.loaderId, p.frameId ?? "", k,
    p.redirectResponse ? "response" : null);
  next.requests.set(k, [newHop(p, 0, true)]);
  s.mainFrameId = p.frameId ?? null;
  if (s.nav !== null && s.committed && s.nav.kind === "navigation") {
    const out = s.abandonPending();
    s.pending = next;
    return out;
  }
  const out = [...s.abandonPending(), ...s.finish(true)];
  s.begin(next, false);
  return out;
}

export function onResponseReceived(s: TabState, ev: EventOf<"Network.responseReceived">): Out {
  const p = ev.params;
  const k = s.key(ev, p.requestId);
  // the wire said 304 before this response came (onResponseReceivedExtraInfo): whichever way the
  // hop is met, it takes it
  const notModified = s.notModified.delete(k);
  const nav = s.navFor(p.loaderId);
  if (nav?.loaderId !== p.loaderId && s.pending === null &&
      // a response has no documentURL: only a request whose id is its loader's counts
      s.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId, "", p.response.url)) {
    // attached after this navigation's request was sent (src/cdp/late.ts, "response")
    const out = s.finish(true);
    const hop = { ...hopFromResponse(p, true), ...(notModified ? { notModified } : {}) };
    s.mainFrameId = p.frameId ?? null;
    s.begin(new Navigation(hop.start, wallFromResponse(p.response, hop.start, NaN), p.loaderId,
      p.frameId ?? "", k, "response"), false);
    s.nav?.requests.set(k, [hop]);
    return out;
  }
  const h = s.hopOf(ev, p.requestId) ?? orphan(s, ev, p.requestId);
  if (nav === null && !s.joined && !h && p.requestId !== p.loaderId && p.loaderId !== "" && isHttp(p.response.url)) {
    // before anything was joined since the attach: a response of the committed document may come
    // before the commit's replay that joins it (TabState.earlyLoaders)
    s.orphans.set(k, [{ ...hopFromResponse(p, false), ...(notModified ? { notModified } : {}) }]);
    s.earlyLoaders.set(k, p.loaderId);
    return [];
  }
  if (nav?.late && !h && isHttp(p.response.url)) {
    // joined late: a request sent before the renderer's agent was enabled
    nav.requests.set(k, [{ ...hopFromResponse(p, false), ...(notModified ? { notModified } : {}) }]);
    if (!s.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
    nav.touch(p.timestamp);
    return [];
  }
  if (h) {
    h.response = p.response;
    h.responseAt = p.timestamp;
    if (notModified) h.notModified = true;
    // a CORS preflight is sent as type Other and answered as Preflight (DevTools: "preflight")
    if (p.type === "Preflight") h.type = p.type;
    activity(s, ev, h, p.timestamp);
  }
  return [];
}

const isRedirect = (status: number): boolean => status >= 300 && status < 400 && status !== 304;

/** How many 304s waiting for their response event are kept (TabState.notModified): the
 * revalidations of one page's burst of requests; more means responses that never came. */
const NOT_MODIFIED_KEPT = 256;

/** The raw response's status, as it came on the wire. Only a 304 is read: Chromium reports a
 * revalidated document's response (Network.responseReceived) as the cached 200 the page shows,
 * where the server answered 304 Not Modified without the body (a subresource's says 304 itself;
 * the real-web /reval/, fixture rw-reval). Its hop takes the wire's status; this event may come
 * before or after the response event, and before the request's own. */
export function onResponseReceivedExtraInfo(s: TabState, ev: EventOf<"Network.responseReceivedExtraInfo">): Out {
  if (ev.params.statusCode !== 304) return [];
  const h = s.hopOf(ev, ev.params.requestId);
  // a hop with its response (the 304's own, or the 200 shown), not one a redirect ended: the
  // next hop's request may not have come yet
  if (h?.response != null && !isRedirect(h.response.status)) {
    h.notModified = true;
  } else {
    if (s.notModified.size >= NOT_MODIFIED_KEPT) s.notModified.clear();
    s.notModified.add(s.key(ev, ev.params.requestId));
  }
  return [];
}

export function onDataReceived(s: TabState, ev: EventOf<"Network.dataReceived">): Out {
  const h = s.hopOf(ev, ev.params.requestId) ?? orphan(s, ev, ev.params.requestId);
  if (h) {
    h.bodyBytes += ev.params.dataLength;
    h.encodedReceived = (h.encodedReceived ?? 0) + ev.params.encodedDataLength;
    h.dataAt = ev.params.timestamp;
    activity(s, ev, h, ev.params.timestamp);
  }
  return [];
}

export function onLoadingFinished(s: TabState, ev: EventOf<"Network.loadingFinished">): Out {
  const h = s.hopOf(ev, ev.params.requestId) ?? orphan(s, ev, ev.params.requestId);
  // the wire's own end wins over one read from the frame's Navigation Timing (late.ts)
  if (h && (h.end === null || h.endFromFrame === true)) {
    h.endFromFrame = false;
    if (fromPrefetch(h)) {
      // the prefetch's own end and bytes (request-state.ts fromPrefetch): this one ended with its
      // body's last chunk handed over (or its response); nothing crossed the wire for it
      h.end = Math.max(ev.params.timestamp, h.responseAt ?? h.start, h.dataAt ?? h.start);
      h.encodedBytes = 0;
    } else {
      h.end = ev.params.timestamp;
      h.encodedBytes = workerScriptBytes(h, ev.params.encodedDataLength) ??
        Math.max(0, Math.round(ev.params.encodedDataLength), preflightHead(h));
    }
    activity(s, ev, h, h.end);
  }
  return [];
}

/** A CORS preflight's bytes: Chromium 156 ends one with encodedDataLength 0, though its head
 * had read its response (fixture rw-misc: 123 bytes at its head over h2; the lab's HTTP/1.1 arm:
 * 228 bytes on the preflight's connection in the NetLog that no record held). */
function preflightHead(h: Hop): number {
  return h.type === "Preflight" ? Math.round(h.response?.encodedDataLength ?? 0) : 0;
}

/** What a failed request's record says: Chromium's net error, or, for a request the browser
 * itself blocked before it left (a Content-Security-Policy, mixed content, an extension such as an
 * ad blocker: `errorText` empty, Chromium 156, fixture rw-errors), DevTools' own "blocked:<why>". */
export function failureOf(p: EventOf<"Network.loadingFailed">["params"]): string {
  if (p.errorText) return p.errorText;
  if (p.blockedReason) return `blocked:${p.blockedReason}`;
  return p.canceled ? "canceled" : "failed";
}

export function onLoadingFailed(s: TabState, ev: EventOf<"Network.loadingFailed">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  const nav = h?.isMain && s.pending?.current(s.pending.mainKey) === h ? s.pending : s.nav;
  if (nav && h && h.end === null) {
    h.end = ev.params.timestamp;
    h.failure = failureOf(ev.params);
    // what came before the failure was on the wire: the response's headers (its
    // encodedDataLength, bytes received when it was reported) and the body's chunks
    // (HTTP/1.1 chunks come with encodedDataLength 0, Chromium 156: without a content
    // encoding the body's bytes are the wire's)
    const headers = h.response?.headers ?? {};
    const encoded = headerOf(headers, "content-encoding") !== undefined;
    const body = encoded ? (h.encodedReceived ?? 0) : Math.max(h.encodedReceived ?? 0, h.bodyBytes);
    const received = (h.response?.encodedDataLength ?? 0) + body;
    if (received > h.encodedBytes) h.encodedBytes = Math.round(received);
    activity(s, ev, h, ev.params.timestamp);
    if (h.isMain && nav.mainFailure === null) {
      nav.mainFailure = h.failure;
      nav.mainFailedAt = ev.params.timestamp;
    }
    // a pending navigation aborted before its commit (stopped, a 204, a download) never
    // replaces the document shown: it is recorded (as aborted) unless it was a download
    if (nav === s.pending && h.isMain && h.failure === "net::ERR_ABORTED") {
      if (isAttachment(h)) s.markDownload(nav);
      return s.abandonPending();
    }
  }
  return [];
}

/** A 103 Early Hints response to the main document: the browser fetches its `Link: rel=preload`
 * resources before the document's own response (RFC 8297), and DevTools reports none of those
 * requests to the tab (Chromium 156: the hinted objects are in caddy's log, not in the events).
 * The record says so rather than staying silent. */
export function onResponseReceivedEarlyHints(s: TabState, ev: EventOf<"Network.responseReceivedEarlyHints">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  const nav = s.ownerOf(ev, ev.params.requestId);
  const link = headerOf(ev.params.headers, "link") ?? "";
  if (nav !== null && h?.isMain === true && /rel\s*=\s*"?(preload|modulepreload)/i.test(link)) nav.declare("early_hints_preloads");
  return [];
}

export function onRequestServedFromCache(s: TabState, ev: EventOf<"Network.requestServedFromCache">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (h) h.servedFromCache = true;
  return [];
}
