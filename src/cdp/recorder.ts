/**
 * The recorder core: raw CDP events of one tab in, NavigationRecords out. Pure: no chrome.*, no
 * clock. Time comes from the events' own timestamps, and completion (network quiet 2 s after load,
 * at most 30 s) is decided by `poll(now)`, `now` in CDP monotonic seconds, which the adapter calls
 * from a timer (src/cdp/clock.ts maps its local clock to CDP time) and fromLog calls per event.
 */
import { buildRecord, type RecordEnv } from "./build-record.ts";
import { LCP_BINDING, LOAD_METRICS_TITLE } from "./enable-commands.ts";
import { DEFAULT_LIMITS, Navigation, type Limits } from "./navigation.ts";
import { endByRedirect, newHop } from "./request-state.ts";
import type { RawEvent } from "./raw-event.ts";
import type { NavigationRecord, Source, UrlDetail } from "../record/types.ts";

export interface RecorderOptions {
  source: Source;
  urlDetail: UrlDetail;
  env: RecordEnv;
  newId: () => string;
  /** The tab's main frame id (= its target id) when known; otherwise learned from events. */
  mainFrameId?: string;
  limits?: Partial<Limits>;
}

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

export class Recorder {
  private nav: Navigation | null = null;
  private committed = false;
  private mainFrameId: string | null;
  private readonly childFrames = new Set<string>();
  private readonly limits: Limits;

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
          this.nav = new Navigation(p.timestamp, p.wallTime, p.loaderId, p.frameId ?? "", k);
          this.committed = false;
          this.nav.requests.set(k, [newHop(p, 0, true)]);
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
        const h = hopOf(ev.params.requestId);
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
          if (nav && f.id === this.mainFrameId && f.loaderId === nav.loaderId) {
            this.committed = true;
            for (const k of nav.beforeCommit) nav.requests.delete(k);
            nav.beforeCommit.clear();
          }
        }
        return [];
      }
      case "Target.attachedToTarget":
        if (ev.params.targetInfo.type === "iframe") this.childFrames.add(ev.params.targetInfo.targetId);
        return [];
      case "Page.lifecycleEvent": {
        const p = ev.params;
        if (!nav || ev.sessionId !== undefined || p.loaderId !== nav.loaderId) return [];
        if (p.frameId !== this.mainFrameId) return [];
        if (p.name === "load") nav.loadAt ??= p.timestamp;
        else if (p.name === "DOMContentLoaded") nav.dclAt ??= p.timestamp;
        else if (p.name === "firstContentfulPaint") nav.fcpAt ??= p.timestamp;
        return [];
      }
      case "Performance.metrics": {
        const start = ev.params.metrics.find((m) => m.name === "NavigationStart")?.value;
        // only the relayed getMetrics result, for this navigation (at most 1 s before its request)
        if (nav && ev.sessionId === undefined && ev.params.title === LOAD_METRICS_TITLE && start !== undefined &&
            start <= nav.t0 + 0.0005 && nav.t0 - start < 1) {
          nav.navStart ??= start;
        }
        return [];
      }
      case "Runtime.bindingCalled": {
        // LCP candidates of the top-level document (enable-commands.ts, LCP_SCRIPT), once this
        // navigation committed; the last one is the LCP (candidates come until input or unload)
        if (!nav || !this.committed || ev.sessionId !== undefined || ev.params.name !== LCP_BINDING) return [];
        const t = lcpEpochMs(ev.params.payload);
        if (t !== null) nav.lcpWall = t / 1000;
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

  /** `cut`: ended from outside (replaced, closed): aborted unless its load event had come. */
  private finish(cut: boolean): NavigationRecord[] {
    const nav = this.nav;
    if (nav === null) return [];
    this.nav = null;
    const aborted = cut && nav.loadAt === null && nav.mainFailure === null;
    return [buildRecord(nav, {
      id: this.o.newId(), source: this.o.source, urlDetail: this.o.urlDetail, env: this.o.env, aborted,
    })];
  }
}
