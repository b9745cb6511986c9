/**
 * Network domain handlers: requests, their redirect hops, responses, bytes and ends. A main-frame
 * document request starts a navigation (ending the one before); every other http(s) request of
 * the tab (any frame, any session) joins the current one. Each handler returns the records it
 * completed.
 */
import { hopFromResponse, wallFromResponse } from "../late.ts";
import { Navigation } from "../navigation.ts";
import type { EventOf } from "../raw-event.ts";
import { endByRedirect, isLongLived, newHop, type Hop } from "../request-state.ts";
import { isHttp, type TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

/** Network activity restarts the navigation's quiet, except a long-lived stream's. */
function activity(s: TabState, h: Hop, at: number): void {
  if (!isLongLived(h)) s.nav?.touch(at);
}

export function onRequestWillBeSent(s: TabState, ev: EventOf<"Network.requestWillBeSent">): Out {
  const p = ev.params;
  s.wallOffset = p.wallTime - p.timestamp;
  const nav = s.nav;
  const k = s.key(ev, p.requestId);
  const prev = nav?.requests.get(k);
  const last = prev?.[prev.length - 1];
  if (nav && prev && last && p.redirectResponse) {
    endByRedirect(last, p.redirectResponse, p.timestamp);
    prev.push(newHop(p, last.hop + 1, last.isMain));
    nav.touch(p.timestamp);
    return [];
  }
  if (s.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId)) {
    const out = s.finish(true);
    s.mainFrameId = p.frameId ?? null;
    // a redirect's next hop with no earlier hop seen: attached during the redirect chain
    s.begin(new Navigation(p.timestamp, p.wallTime, p.loaderId, p.frameId ?? "", k,
      p.redirectResponse ? "response" : null), false);
    s.nav?.requests.set(k, [newHop(p, 0, true)]);
    return out;
  }
  if (nav && isHttp(p.request.url) && !prev) {
    const hop = newHop(p, 0, false);
    nav.requests.set(k, [hop]);
    if (!s.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
    activity(s, hop, p.timestamp);
  }
  return [];
}

export function onResponseReceived(s: TabState, ev: EventOf<"Network.responseReceived">): Out {
  const p = ev.params;
  const nav = s.nav;
  if (nav?.loaderId !== p.loaderId && s.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId)) {
    // attached after this navigation's request was sent (src/cdp/late.ts, "response")
    const out = s.finish(true);
    const hop = hopFromResponse(p, true);
    s.mainFrameId = p.frameId ?? null;
    s.begin(new Navigation(hop.start, wallFromResponse(p.response, hop.start, NaN), p.loaderId,
      p.frameId ?? "", s.key(ev, p.requestId), "response"), false);
    s.nav?.requests.set(s.key(ev, p.requestId), [hop]);
    return out;
  }
  const h = s.hopOf(ev, p.requestId);
  if (nav?.late && !h && isHttp(p.response.url)) {
    // joined late: a request sent before the renderer's agent was enabled
    const k = s.key(ev, p.requestId);
    nav.requests.set(k, [hopFromResponse(p, false)]);
    if (!s.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
    nav.touch(p.timestamp);
    return [];
  }
  if (nav && h) {
    h.response = p.response;
    h.responseAt = p.timestamp;
    activity(s, h, p.timestamp);
  }
  return [];
}

export function onDataReceived(s: TabState, ev: EventOf<"Network.dataReceived">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (s.nav && h) {
    h.bodyBytes += ev.params.dataLength;
    activity(s, h, ev.params.timestamp);
  }
  return [];
}

export function onLoadingFinished(s: TabState, ev: EventOf<"Network.loadingFinished">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (s.nav && h && h.end === null) {
    h.end = ev.params.timestamp;
    h.encodedBytes = Math.max(0, Math.round(ev.params.encodedDataLength));
    activity(s, h, ev.params.timestamp);
  }
  return [];
}

export function onLoadingFailed(s: TabState, ev: EventOf<"Network.loadingFailed">): Out {
  const nav = s.nav;
  const h = s.hopOf(ev, ev.params.requestId);
  if (nav && h && h.end === null) {
    h.end = ev.params.timestamp;
    h.failure = ev.params.errorText || (ev.params.canceled ? "canceled" : "failed");
    activity(s, h, ev.params.timestamp);
    if (h.isMain && nav.mainFailure === null) {
      nav.mainFailure = h.failure;
      nav.mainFailedAt = ev.params.timestamp;
    }
  }
  return [];
}

export function onRequestServedFromCache(s: TabState, ev: EventOf<"Network.requestServedFromCache">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (h) h.servedFromCache = true;
  return [];
}
