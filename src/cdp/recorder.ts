/**
 * The recorder core: raw CDP events of one tab in, NavigationRecords out. Pure: no chrome.*, no
 * clock. Time comes from the events' own timestamps, and completion (network quiet 2 s after load,
 * at most 30 s) is decided by `poll(now)`, `now` in CDP monotonic seconds, which the adapter calls
 * from a timer (src/cdp/clock.ts maps its local clock to CDP time) and fromLog calls per event.
 */
import { buildRecord, type RecordEnv } from "./build-record.ts";
import { LCP_BINDING, LOAD_METRICS_TITLE } from "./enable-commands.ts";
import { NAV_TIMING_BINDING, endFromTiming, hopFromResponse, hopFromTiming, parseNavTiming, wallFromResponse } from "./late.ts";
import { DEFAULT_LIMITS, Navigation, type Limits } from "./navigation.ts";
import { endByRedirect, newHop } from "./request-state.ts";
import { FRAME_EVENT, type RawEvent } from "./raw-event.ts";
import type { NavigationRecord, Source, UrlDetail } from "../record/types.ts";
import { parseHistogram } from "../visual/histogram.ts";
import type { WallFrame } from "./build-record.ts";

export interface RecorderOptions {
  source: Source;
  urlDetail: UrlDetail;
  env: RecordEnv;
  newId: () => string;
  /** The tab's main frame id (= its target id) when known; otherwise learned from events. */
  mainFrameId?: string;
  limits?: Partial<Limits>;
  /** Capture paint progress (the tab's screencast) and compute the visual metrics (src/visual/);
   * off by default: lab campaigns and users who choose it switch it on. */
  visual?: boolean;
}

/** Frames kept per navigation: an animated page paints 60 a second, and a frame's histogram is
 * 768 numbers; past this the load gets no visual metrics rather than a cut-off picture. */
export const MAX_FRAMES = 1000;

const isHttp = (url: string): boolean => url.startsWith("http://") || url.startsWith("https://");

/** The binding's payload `{"t": epoch ms}`, or null for anything else. */
function lcpEpochMs(payload: string): number | null {
  try {
    const v: unknown = JSON.parse(payload);
    if (typeof v !== "object" || v === null || !("t" in v)) return null;
    return typeof v.t === "number" && Number.isFinite(v.t) && v.t > 0 ? v.t : null;
  } catch {
    return null;
  }
}

/** Just attached, nothing joined yet: does `ev` show the main frame's document already
 * committed and loading (a subresource request of its own, a lifecycle event past the commit)? */
function midLoad(ev: RawEvent, mainFrameId: string | null): { t: number; loaderId: string } | null {
  if (ev.sessionId !== undefined || mainFrameId === null) return null;
  if (ev.method === "Network.requestWillBeSent") {
    const p = ev.params;
    if (p.frameId !== mainFrameId || p.type === "Document" || p.requestId === p.loaderId || !isHttp(p.documentURL) ||
        !isHttp(p.request.url)) return null;
    return { t: p.timestamp, loaderId: p.loaderId };
  }
  if (ev.method === "Page.lifecycleEvent") {
    const p = ev.params;
    if (p.frameId !== mainFrameId || p.name === "init" || p.name === "commit") return null;
    return { t: p.timestamp, loaderId: p.loaderId };
  }
  return null;
}

export class Recorder {
  private nav: Navigation | null = null;
  private committed = false;
  /** A navigation has been recorded (or joined) since the attach. */
  private joined = false;
  private mainFrameId: string | null;
  private readonly childFrames = new Set<string>();
  private readonly limits: Limits;
  /** Screencast frames of the current navigation, and before it the last one seen: the screen
   * when it started (src/visual/metrics.ts navigationVisuals). */
  private frames: WallFrame[] = [];
  private framesOverflow = false;
  /** The current navigation's commit (its first lifecycle event), CDP seconds. */
  private commitAt: number | null = null;

  constructor(private readonly o: RecorderOptions) {
    this.mainFrameId = o.mainFrameId ?? null;
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
  }

  /** A navigation is being recorded (the adapter keeps polling while true). */
  get active(): boolean {
    return this.nav !== null;
  }

  /** Feeds one event; returns records it completed (a navigation replaced by a new one). */
  push(ev: RawEvent): NavigationRecord[] {
    const out = this.step(ev);
    if (this.nav !== null) this.joined = true;
    return out;
  }

  private step(ev: RawEvent): NavigationRecord[] {
    const mid = this.joined || this.nav !== null ? null : midLoad(ev, this.mainFrameId);
    if (mid !== null && this.mainFrameId !== null) {
      // attached during a cross-process commit (a tab that showed chrome://newtab): the commit's
      // lifecycle replay went to the old document, so the first sign of the new one is one of its
      // own requests or a later lifecycle event (src/cdp/late.ts, "commit")
      this.begin(new Navigation(mid.t, NaN, mid.loaderId, this.mainFrameId, `|${mid.loaderId}`, "commit"));
      this.committed = true;
    }
    const nav = this.nav;
    const key = (id: string): string => `${ev.sessionId ?? ""}|${id}`;
    // An OOPIF's document request starts in the parent's session and finishes in the child's
    // (same requestId, the loader id, unique in the browser): look it up in the root session too.
    const hopOf = (id: string) => nav?.current(key(id)) ?? nav?.current(`|${id}`);
    switch (ev.method) {
      case "Network.requestWillBeSent": {
        const p = ev.params;
        const k = key(p.requestId);
        const prev = nav?.requests.get(k);
        const last = prev?.[prev.length - 1];
        if (nav && prev && last && p.redirectResponse) {
          endByRedirect(last, p.redirectResponse, p.timestamp);
          prev.push(newHop(p, last.hop + 1, last.isMain));
          nav.touch(p.timestamp);
          return [];
        }
        if (this.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId)) {
          const out = this.finish(true);
          this.mainFrameId = p.frameId ?? null;
          // a redirect's next hop with no earlier hop seen: attached during the redirect chain
          this.begin(new Navigation(p.timestamp, p.wallTime, p.loaderId, p.frameId ?? "", k,
            p.redirectResponse ? "response" : null));
          this.committed = false;
          this.nav?.requests.set(k, [newHop(p, 0, true)]);
          return out;
        }
        if (nav && isHttp(p.request.url) && !prev) {
          nav.requests.set(k, [newHop(p, 0, false)]);
          if (!this.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
          nav.touch(p.timestamp);
        }
        return [];
      }
      case "Network.responseReceived": {
        const p = ev.params;
        if (nav?.loaderId !== p.loaderId && this.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId)) {
          // attached after this navigation's request was sent (src/cdp/late.ts, "response")
          const out = this.finish(true);
          const hop = hopFromResponse(p, true);
          this.mainFrameId = p.frameId ?? null;
          this.begin(new Navigation(hop.start, wallFromResponse(p.response, hop.start, NaN), p.loaderId,
            p.frameId ?? "", key(p.requestId), "response"));
          this.nav?.requests.set(key(p.requestId), [hop]);
          this.committed = false;
          return out;
        }
        const h = hopOf(ev.params.requestId);
        if (nav?.late && !h && isHttp(p.response.url)) {
          const k = key(p.requestId);
          nav.requests.set(k, [hopFromResponse(p, false)]);
          if (!this.committed && p.loaderId !== nav.loaderId) nav.beforeCommit.add(k);
          nav.touch(p.timestamp);
          return [];
        }
        if (nav && h) {
          h.response = ev.params.response;
          h.responseAt = ev.params.timestamp;
          nav.touch(ev.params.timestamp);
        }
        return [];
      }
      case "Network.dataReceived": {
        const h = hopOf(ev.params.requestId);
        if (nav && h) {
          h.bodyBytes += ev.params.dataLength;
          nav.touch(ev.params.timestamp);
        }
        return [];
      }
      case "Network.loadingFinished": {
        const h = hopOf(ev.params.requestId);
        if (nav && h && h.end === null) {
          h.end = ev.params.timestamp;
          h.encodedBytes = Math.max(0, Math.round(ev.params.encodedDataLength));
          nav.touch(ev.params.timestamp);
        }
        return [];
      }
      case "Network.loadingFailed": {
        const h = hopOf(ev.params.requestId);
        if (nav && h && h.end === null) {
          h.end = ev.params.timestamp;
          h.failure = ev.params.errorText || (ev.params.canceled ? "canceled" : "failed");
          nav.touch(ev.params.timestamp);
          if (h.isMain && nav.mainFailure === null) {
            nav.mainFailure = h.failure;
            nav.mainFailedAt = ev.params.timestamp;
          }
        }
        return [];
      }
      case "Network.requestServedFromCache": {
        const h = hopOf(ev.params.requestId);
        if (h) h.servedFromCache = true;
        return [];
      }
      case "Page.frameAttached":
        if (ev.params.parentFrameId) this.childFrames.add(ev.params.frameId);
        return [];
      case "Page.frameNavigated": {
        const f = ev.params.frame;
        if (f.parentId) this.childFrames.add(f.id);
        else if (ev.sessionId === undefined) {
          this.mainFrameId ??= f.id;
          if (nav && f.id === this.mainFrameId && f.loaderId === nav.loaderId) this.commit(nav);
        }
        return [];
      }
      case "Target.attachedToTarget":
        if (ev.params.targetInfo.type === "iframe") this.childFrames.add(ev.params.targetInfo.targetId);
        return [];
      case "Page.lifecycleEvent": {
        const p = ev.params;
        if (!nav && ev.sessionId === undefined && p.name === "commit" && p.frameId === this.mainFrameId) {
          // attached after the commit: the replayed commit is all there is of its start (late.ts)
          this.begin(new Navigation(p.timestamp, NaN, p.loaderId, p.frameId, key(p.loaderId), "commit"));
          this.committed = true;
          return [];
        }
        if (!nav || ev.sessionId !== undefined || p.loaderId !== nav.loaderId) return [];
        if (p.frameId !== this.mainFrameId) return [];
        // joined at the response and enabled after the commit: no frameNavigated, only this replay
        if (p.name === "commit" && nav.late !== null) this.commit(nav);
        // the new document's first lifecycle event is its commit: `init` (`commit` only in the
        // replay at enable, verified with Chromium 156's fixtures)
        if (p.name === "init" || p.name === "commit") this.commitAt ??= p.timestamp;
        if (p.name === "load") nav.loadAt ??= p.timestamp;
        else if (p.name === "DOMContentLoaded") nav.dclAt ??= p.timestamp;
        else if (p.name === "firstContentfulPaint") nav.fcpAt ??= p.timestamp;
        return [];
      }
      case "Performance.metrics": {
        const start = ev.params.metrics.find((m) => m.name === "NavigationStart")?.value;
        // only the relayed getMetrics result, for this navigation (at most 1 s before its request)
        // a late navigation's start may be long before what was seen of it (a slow response)
        const window = nav?.late ? this.limits.maxWithoutLoadMs / 1000 : 1;
        if (nav && ev.sessionId === undefined && ev.params.title === LOAD_METRICS_TITLE && start !== undefined &&
            start <= nav.t0 + 0.0005 && nav.t0 - start < window) {
          nav.navStart ??= start;
        }
        return [];
      }
      case "Runtime.bindingCalled": {
        if (ev.sessionId === undefined && ev.params.name === NAV_TIMING_BINDING) {
          this.lateTiming(ev.params.payload);
          return [];
        }
        // LCP candidates of the top-level document (enable-commands.ts, LCP_SCRIPT), once this
        // navigation committed; the last one is the LCP (candidates come until input or unload)
        if (!nav || !this.committed || ev.sessionId !== undefined || ev.params.name !== LCP_BINDING) return [];
        const t = lcpEpochMs(ev.params.payload);
        if (t !== null) nav.lcpWall = t / 1000;
        return [];
      }
      case FRAME_EVENT: {
        const histogram = parseHistogram(ev.params.histogram);
        const wall = ev.params.wallTime;
        if (ev.sessionId !== undefined || histogram === null || typeof wall !== "number" || !Number.isFinite(wall)) return [];
        if (nav === null) this.frames = [{ wall, histogram }];
        else if (this.frames.length >= MAX_FRAMES) this.framesOverflow = true;
        else this.frames.push({ wall, histogram });
        return [];
      }
      case "Page.loadEventFired":
        if (nav && this.committed && ev.sessionId === undefined) nav.loadAt ??= ev.params.timestamp;
        return [];
      case "Page.domContentEventFired":
        if (nav && this.committed && ev.sessionId === undefined) nav.dclAt ??= ev.params.timestamp;
        return [];
      default:
        return [];
    }
  }

  /** Completes the current navigation if, at CDP time `now` (seconds), it is done. */
  poll(now: number): NavigationRecord[] {
    return this.nav?.isComplete(now, this.limits) ? this.finish(false) : [];
  }

  /** A late navigation waits for the page's Navigation Timing (the adapter relays it after load). */
  get wantsNavigationTiming(): boolean {
    return this.nav !== null && this.nav.late !== null && this.nav.zeroWall === null;
  }

  /** Joined at a replayed commit of a document whose load event was replayed too: it loaded
   * before the attach (the adapter knows whether that was just now or long ago). */
  get joinedAfterLoad(): boolean {
    return this.wantsNavigationTiming && this.nav?.late === "commit" && this.nav.loadAt !== null;
  }

  /** Ends recording (tab closed, detached, end of a log): whatever is open is emitted. */
  flush(): NavigationRecord[] {
    return this.finish(true);
  }

  private isMainNavigation(
    sessionId: string | undefined, type: string | undefined, requestId: string, loaderId: string,
    frameId: string | undefined,
  ): boolean {
    if (sessionId !== undefined || type !== "Document" || requestId !== loaderId || !frameId) return false;
    return this.mainFrameId === null ? !this.childFrames.has(frameId) : frameId === this.mainFrameId;
  }

  /** A navigation starts: it keeps, of the frames so far, only the screen shown last. */
  private begin(nav: Navigation): void {
    const screen = this.frames.reduce<WallFrame | null>((a, f) => (a === null || f.wall >= a.wall ? f : a), null);
    this.frames = screen === null ? [] : [screen];
    this.framesOverflow = false;
    this.commitAt = null;
    this.nav = nav;
  }

  private commit(nav: Navigation): void {
    this.committed = true;
    for (const k of nav.beforeCommit) nav.requests.delete(k);
    nav.beforeCommit.clear();
  }

  /** The relayed Navigation Timing of a late navigation's document (late.ts). */
  private lateTiming(payload: string): void {
    const nav = this.nav;
    const t = parseNavTiming(payload);
    if (!nav?.late || nav.zeroWall !== null || nav.navStart === null || t === null || t.loaderId !== nav.loaderId ||
        !isHttp(t.url)) return;
    nav.zeroWall = t.timeOrigin / 1000;
    const main = nav.current(nav.mainKey);
    if (main) endFromTiming(main, t, nav.navStart);
    else if (nav.late === "commit") nav.requests.set(nav.mainKey, [hopFromTiming(t, nav.frameId, nav.navStart)]);
  }

  /** `cut`: ended from outside (replaced, closed): aborted unless its load event had come. */
  private finish(cut: boolean): NavigationRecord[] {
    const nav = this.nav;
    if (nav === null) return [];
    this.nav = null;
    // joined after its commit and never given its document's timing: an already loaded page
    // (lifecycle events are replayed at attach), a restore from the back/forward cache, a
    // non-http document; nothing to say about its main document, so no record
    if (nav.late === "commit" && !nav.requests.has(nav.mainKey)) return [];
    // joined at its response and no wall clock for it (no responseTime, no Navigation Timing)
    if (nav.zeroWall === null && !Number.isFinite(nav.wallTime)) return [];
    const aborted = cut && nav.loadAt === null && nav.mainFailure === null;
    // visual metrics of a whole, loaded navigation only: one joined late missed its start screen
    const visual = this.o.visual === true && !this.framesOverflow && nav.late === null && !aborted && nav.loadAt !== null &&
      nav.mainFailure === null ? { frames: this.frames, commitAt: this.commitAt } : null;
    return [buildRecord(nav, {
      id: this.o.newId(), source: this.o.source, urlDetail: this.o.urlDetail, env: this.o.env, aborted, visual,
    })];
  }
}
