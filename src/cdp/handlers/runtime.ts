/**
 * Runtime and Performance handlers: what the page reports through the recorder's own channels
 * (the LCP observer's binding and, for a navigation joined late, its Navigation Timing, both from
 * the extension's isolated world; src/cdp/enable-commands.ts, late.ts) and the navigation start
 * the session core relays after the load event (Performance.getMetrics). Console messages and
 * exceptions are not handled here: they carry no network activity and their `timestamp` is
 * wall-clock time (src/cdp/event-clock.ts).
 */
import { LCP_BINDING, LOAD_METRICS_TITLE } from "../enable-commands.ts";
import { NAV_TIMING_BINDING, endFromFrameTiming, endFromTiming, hopFromTiming, parseNavTiming } from "../late.ts";
import type { EventOf } from "../raw-event.ts";
import { isOpenFrameDocument } from "../request-state.ts";
import { isHttp, type TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

/** The binding's payload as an object, or null when it is not JSON of one. */
function payloadObject(payload: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(payload);
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The binding's payload `{"t": epoch ms}`, or null for anything else. */
function lcpEpochMs(payload: string): number | null {
  const t = payloadObject(payload)?.t;
  return typeof t === "number" && Number.isFinite(t) && t > 0 ? t : null;
}

/** The binding's payload `{"hidden": epoch ms, "at": ms after timeOrigin}`: the page was hidden
 * then (enable-commands.ts LCP_SCRIPT); null for anything else. */
function hiddenAt(payload: string): { epochMs: number; at: number } | null {
  const o = payloadObject(payload);
  const epochMs = o?.hidden, at = o?.at;
  return typeof epochMs === "number" && Number.isFinite(epochMs) && epochMs > 0 && typeof at === "number" && Number.isFinite(at)
    ? { epochMs, at } : null;
}

/** The binding's payload `{"sw": true}`: the page has a service worker its load did not use
 * (enable-commands.ts LCP_SCRIPT). */
function workerReported(payload: string): boolean {
  return payloadObject(payload)?.sw === true;
}

export function onBindingCalled(s: TabState, ev: EventOf<"Runtime.bindingCalled">): Out {
  if (ev.sessionId !== undefined) {
    if (ev.params.name === NAV_TIMING_BINDING) frameTiming(s, ev.params.payload);
    return [];
  }
  if (ev.params.name === NAV_TIMING_BINDING) {
    lateTiming(s, ev.params.payload);
    return [];
  }
  // LCP candidates of the top-level document, once this navigation committed; the last one is
  // the LCP (candidates come until input or unload)
  if (s.nav?.kind !== "navigation" || !s.committed || ev.params.name !== LCP_BINDING) return [];
  if (workerReported(ev.params.payload)) {
    s.nav.declare("service_worker_fetches");
    return [];
  }
  const hidden = hiddenAt(ev.params.payload);
  if (hidden !== null) {
    s.nav.hiddenWall = Math.min(s.nav.hiddenWall ?? Infinity, hidden.epochMs / 1000);
    if (hidden.at <= 0) s.nav.hiddenAtStart = true;
    return [];
  }
  const t = lcpEpochMs(ev.params.payload);
  if (t !== null) s.nav.lcpWalls.push(t / 1000);
  return [];
}

/** The relayed Navigation Timing of a late navigation's document (late.ts). */
function lateTiming(s: TabState, payload: string): void {
  const nav = s.nav;
  const t = parseNavTiming(payload);
  // seen from its request, committed while the attach's enables were under way (session.ts
  // afterAttach): only the page's first contentful paint, when no lifecycle event gave one
  if (nav?.late === null && nav.kind === "navigation" && t !== null && t.loaderId === nav.loaderId && t.fcp !== null) {
    nav.paintFcpWall ??= (t.timeOrigin + t.fcp) / 1000;
    return;
  }
  if (!nav?.late || nav.navStart === null || t === null || t.loaderId !== nav.loaderId || !isHttp(t.url)) return;
  const main = nav.current(nav.mainKey);
  // the wire's 304, when the response's ExtraInfo that says so came before the attach
  if (main && t.revalidated) main.notModified = true;
  // the page's own paint timing, when the lifecycle events (live or replayed) did not carry it
  if (t.fcp !== null) nav.fcpAt ??= nav.navStart + t.fcp / 1000;
  // joined at its response with its end seen but none of its body's data: the dataReceived came
  // before the attach took effect in the renderer (the real-web /gzip/ everyday, let go, CI run
  // 71: a body of 0 bytes for a 621-byte page, fixture rw-late-gzip). The body the page got is
  // its Navigation Timing's; the wire's bytes stay its loadingFinished's
  if (main && main.end !== null && main.bodyBytes === 0 && t.decodedBodySize > 0) main.bodyBytes = t.decodedBodySize;
  if (nav.zeroWall !== null) {
    // relayed again after load: the document's end, if the first relay came before it
    if (main?.fromTiming && main.end === null && t.responseEnd > 0) endFromTiming(main, t, nav.navStart);
    return;
  }
  nav.zeroWall = t.timeOrigin / 1000;
  if (main) endFromTiming(main, t, nav.navStart);
  else if (nav.late === "commit") nav.requests.set(nav.mainKey, [hopFromTiming(t, nav.frameId, nav.navStart)]);
}

/** The relayed Navigation Timing of an iframe whose document's end was not seen (late.ts
 * endFromFrameTiming): a document request's id is its loader's. */
function frameTiming(s: TabState, payload: string): void {
  const nav = s.nav;
  const t = parseNavTiming(payload);
  if (nav === null || t === null) return;
  for (const h of nav.currentHops()) {
    if (isOpenFrameDocument(h) && h.requestId === t.loaderId) {
      endFromFrameTiming(h, t, nav.zero, nav.epochZero);
    }
  }
}

export function onMetrics(s: TabState, ev: EventOf<"Performance.metrics">): Out {
  const nav = s.nav;
  const start = ev.params.metrics.find((m) => m.name === "NavigationStart")?.value;
  // only the relayed getMetrics result, for this navigation (at most 1 s before its request);
  // a late navigation's start may be long before what was seen of it (a slow response)
  const window = nav?.late ? s.limits.maxWithoutLoadMs / 1000 : 1;
  // joined at a replayed commit: that commit's time may be another's (a document served from a
  // speculation rule's prefetch: the prefetch's end, seconds before this page's start), so the
  // start may come after it, though not after the page's DOMContentLoaded
  const latest = nav?.late === "commit" ? Math.max(nav.t0, nav.dclAt ?? nav.loadAt ?? nav.t0) : nav?.t0 ?? 0;
  if (nav && ev.sessionId === undefined && ev.params.title === LOAD_METRICS_TITLE && start !== undefined &&
      start <= latest + 0.0005 && nav.t0 - start < window) {
    nav.navStart ??= start;
  }
  return [];
}
