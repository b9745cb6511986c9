/**
 * What the recorder knows of one tab between events: the navigation being recorded, the frames
 * seen, the main frame, the painted screens. The event handlers (src/cdp/handlers/) read and
 * change it; `finish` turns the current navigation into its record (build-record.ts).
 */
import { buildRecord, finalUrlOf, type RecordEnv, type WallFrame } from "./build-record.ts";
import { DEFAULT_LIMITS, type Limits, type Navigation } from "./navigation.ts";
import { cutShort, isLongLived, type Hop } from "./request-state.ts";
import type { RawEvent } from "./raw-event.ts";
import type { IncompleteReason, NavigationRecord, Source, UrlDetail } from "../record/types.ts";

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
  /** Attached for a same-document navigation already made to this URL (a single-page app's
   * route change in a tab let go idle): it starts at the first request seen. */
  softAttach?: string;
  /** The tab's document was recorded before the first event (a tapped log of a same-document
   * navigation or a restore, src/replay/log-tap.ts): requests are not a late join's sign. */
  joined?: boolean;
}

/** Frames kept per navigation: an animated page paints 60 a second, and a frame's histogram is
 * 768 numbers; past this the load gets no visual metrics rather than a cut-off picture. */
export const MAX_FRAMES = 1000;

/** Records whose unreduced URL is kept (TabState.fullUrls): a commit is reported within
 * milliseconds of its record's start, long before the few records a tab makes meanwhile. */
export const FULL_URLS_KEPT = 16;

/** How long before its own event a same-document navigation or a restore takes the tab's
 * requests that came with no navigation: chrome.debugger delivered a single-page app's fetch a
 * few milliseconds before the Page.navigatedWithinDocument of the pushState that preceded it
 * (Chromium 156, the real-web test site); half a second is the lab's network quiet. */
export const ORPHAN_WINDOW_S = 0.5;

export const isHttp = (url: string): boolean => url.startsWith("http://") || url.startsWith("https://");

export class TabState {
  nav: Navigation | null = null;
  /** The current navigation's document has replaced the previous one. */
  committed = false;
  /** A main-frame navigation under way while the current one's document is still shown: it
   * becomes current when its document commits. Until then the current document goes on loading
   * (its requests are its own), and a navigation that never commits (a download, a 204, one
   * stopped before its response) never cuts the current one short. */
  pending: Navigation | null = null;
  /** A navigation has been recorded (or joined) since the attach. */
  joined = false;
  mainFrameId: string | null;
  readonly childFrames = new Set<string>();
  readonly limits: Limits;
  /** Screencast frames of the current navigation, and before it the last one seen: the screen
   * when it started (src/visual/metrics.ts navigationVisuals). */
  frames: WallFrame[] = [];
  framesOverflow = false;
  /** The current navigation's commit (its first lifecycle event), CDP seconds. */
  commitAt: number | null = null;
  /** The latest CDP monotonic time known: of the last event that carried one, or the adapter's
   * clock when it fed an event without one (src/cdp/event-clock.ts). */
  now: number | null = null;
  /** Epoch seconds minus CDP monotonic seconds, from the last request's `wallTime`: places a
   * navigation that has no request of its own (soft, bfcache) on the wall clock. */
  wallOffset: number | null = null;
  /** The main frame's committed document (its loader id), for same-document navigations. */
  documentLoaderId: string | null = null;
  /** The main frame's URL as last seen (its commit, fragment included, then each same-document
   * navigation's): a History API call that leaves it as it is changes no route. */
  documentUrl: string | null = null;
  /** WebSocket URLs by request key, from Network.webSocketCreated until their handshake. */
  readonly sockets = new Map<string, string>();
  /** Requests the tab made while no navigation was being recorded (after one was), kept a short
   * while: a same-document navigation or a back/forward-cache restore takes those that came just
   * before its own event (ORPHAN_WINDOW_S), as chrome.debugger can deliver a page's requests
   * before the Page event that caused them. */
  readonly orphans = new Map<string, Hop[]>();
  /** The loader of each orphan seen from its response before anything was joined since the attach:
   * Network.enable comes before the lifecycle events are on (enable-commands.ts), so a response
   * of the committed document can come before the commit's replay that joins it (late.ts). The
   * navigation joined late takes those of its own loader. */
  readonly earlyLoaders = new Map<string, string>();

  /** Requests (by key) whose wire status was 304 before their response event came
   * (Network.responseReceivedExtraInfo can come first, even before the request): their hop is
   * marked `notModified` at its response. A few at a time; cleared past NOT_MODIFIED_KEPT. */
  readonly notModified = new Set<string>();

  /** The unreduced URL of each record built (by id), the latest FULL_URLS_KEPT: the session
   * matches webNavigation's commits to its records by it (src/cdp/missed.ts). */
  readonly fullUrls = new Map<string, string>();

  constructor(readonly o: RecorderOptions) {
    this.joined = o.joined === true;
    this.mainFrameId = o.mainFrameId ?? null;
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
  }

  /** A request's key: its session and CDP requestId (ids are unique per session only). */
  key(ev: RawEvent, requestId: string): string {
    return `${ev.sessionId ?? ""}|${requestId}`;
  }

  /** The current hop of a request of the navigation (or of the pending one). An OOPIF's
   * document request starts in the parent's session and finishes in the child's (same requestId,
   * the loader id, unique in the browser): it is looked up in the root session too. */
  hopOf(ev: RawEvent, requestId: string): Hop | undefined {
    const k = this.key(ev, requestId);
    const nav = this.ownerOf(ev, requestId);
    return nav?.current(k) ?? nav?.current(`|${requestId}`);
  }

  /** The navigation (current or pending) that holds a request. */
  ownerOf(ev: RawEvent, requestId: string): Navigation | null {
    const k = this.key(ev, requestId);
    for (const nav of [this.nav, this.pending]) {
      if (nav?.requests.has(k) === true || nav?.requests.has(`|${requestId}`) === true) return nav;
    }
    return null;
  }

  /** A request seen with no navigation to hold it. Those begun before the window a navigation
   * without a document takes them from (ORPHAN_WINDOW_S before the latest time, which only grows)
   * can no longer be taken, and are let go: a tab held after its record (everyday, up to an hour)
   * on a page that polls kept every request it made until its next navigation. Those of a late
   * join's own document (`earlyLoaders`) are kept for it. */
  addOrphan(k: string, hops: Hop[]): void {
    this.orphans.set(k, hops);
    const since = (this.now ?? -Infinity) - ORPHAN_WINDOW_S;
    for (const [key, kept] of this.orphans) {
      if (!this.earlyLoaders.has(key) && (kept[0]?.start ?? Infinity) < since) this.orphans.delete(key);
    }
  }

  /** The requests seen with no navigation that began at or after `since` (CDP seconds); the
   * others are dropped. */
  takeOrphans(since: number): Map<string, Hop[]> {
    const out = new Map<string, Hop[]>();
    for (const [k, hops] of this.orphans) if ((hops[0]?.start ?? -Infinity) >= since) out.set(k, hops);
    this.orphans.clear();
    return out;
  }

  /** The navigation a request with `loaderId` belongs to: the pending one's own, or the current. */
  navFor(loaderId: string): Navigation | null {
    return this.pending !== null && loaderId === this.pending.loaderId ? this.pending : this.nav;
  }

  /** The pending navigation ends without its commit (replaced by another, aborted, a download):
   * its record, aborted, unless it was a download; the current navigation goes on. */
  abandonPending(): NavigationRecord[] {
    const gone = this.pending;
    this.pending = null;
    if (gone === null) return [];
    const current = this.nav;
    const { committed, frames, framesOverflow, commitAt } = this;
    this.nav = gone;
    const out = this.finish(true);
    Object.assign(this, { nav: current, committed, frames, framesOverflow, commitAt });
    return out;
  }

  /** `nav` (the pending navigation, or a first one that never committed) is a download: it makes
   * no record, and counts once on the document shown. */
  markDownload(nav: Navigation): void {
    nav.download = true;
    const url = nav.current(nav.mainKey)?.url;
    if (this.nav !== null && this.nav !== nav && url !== undefined) this.nav.downloadUrls.add(url);
  }

  /** The pending navigation committed: the current one ends (aborted if before its load). */
  commitPending(): NavigationRecord[] {
    const next = this.pending;
    if (next === null) return [];
    this.pending = null;
    const out = this.finish(true);
    this.begin(next, true);
    return out;
  }

  /** A top-level document request of the tab's main frame (or, before it is known, of a frame
   * that is not a child frame). Since Chromium 71 or so a navigation's requestId is its loaderId;
   * before, they differed and the navigation request was the one for the document's own URL
   * (public logs of Chrome 47-59, tests/fixtures/public). */
  isMainNavigation(
    sessionId: string | undefined, type: string | undefined, requestId: string, loaderId: string,
    frameId: string | undefined, documentURL: string, url: string,
  ): boolean {
    if (sessionId !== undefined || type !== "Document" || !frameId) return false;
    if (requestId !== loaderId && documentURL !== url) return false;
    return this.mainFrameId === null ? !this.childFrames.has(frameId) : frameId === this.mainFrameId;
  }

  /** A navigation starts: it keeps, of the frames so far, only the screen shown last; requests
   * seen with no navigation before it are no longer anyone's, but a navigation joined late takes
   * the responses of its own document that came before it (`earlyLoaders`). */
  begin(nav: Navigation, committed: boolean): void {
    if (nav.late !== null) {
      for (const [k, loaderId] of this.earlyLoaders) {
        const hops = this.orphans.get(k);
        if (loaderId !== nav.loaderId || hops === undefined) continue;
        nav.requests.set(k, hops);
        for (const h of hops) nav.touch(h.end ?? h.responseAt ?? h.start);
      }
    }
    this.earlyLoaders.clear();
    this.orphans.clear();
    const screen = this.frames.reduce<WallFrame | null>((a, f) => (a === null || f.wall >= a.wall ? f : a), null);
    this.frames = screen === null ? [] : [screen];
    this.framesOverflow = false;
    this.commitAt = null;
    this.nav = nav;
    this.committed = committed;
  }

  /** The navigation's document committed: the previous document's requests seen meanwhile go.
   * `at`: the commit's own time, when its event came after the requests (a commit replayed at a
   * late attach): a request begun after it is the new document's (the previous one was gone). */
  commit(nav: Navigation, at?: number): void {
    this.committed = true;
    for (const k of nav.beforeCommit) {
      const first = nav.requests.get(k)?.[0];
      if (at === undefined || first === undefined || first.start < at) nav.requests.delete(k);
    }
    nav.beforeCommit.clear();
  }

  /** `cut`: ended from outside (replaced, closed): aborted unless its load event had come. */
  finish(cut: boolean): NavigationRecord[] {
    const nav = this.nav;
    if (nav === null) return [];
    this.nav = null;
    // joined after its commit and never given its document's timing: an already loaded page
    // (lifecycle events are replayed at attach), a restore from the back/forward cache, a
    // non-http document; nothing to say about its main document, so no record
    if (nav.late === "commit" && !nav.requests.has(nav.mainKey)) return [];
    // joined at its response and no wall clock for it (no responseTime, no Navigation Timing)
    if (nav.zeroWall === null && !Number.isFinite(nav.wallTime)) return [];
    const aborted = cut && nav.settled === null;
    if (nav.download) return [];
    // visual metrics of a whole, loaded navigation only: one joined late missed its start screen
    const visual = this.o.visual === true && !this.framesOverflow && nav.late === null && !aborted && nav.loadAt !== null &&
      nav.mainFailure === null ? { frames: this.frames, commitAt: this.commitAt } : null;
    const id = this.o.newId();
    this.fullUrls.set(id, finalUrlOf(nav));
    for (const old of this.fullUrls.keys()) {
      if (this.fullUrls.size <= FULL_URLS_KEPT) break;
      this.fullUrls.delete(old);
    }
    return [buildRecord(nav, {
      id, source: this.o.source, urlDetail: this.o.urlDetail, env: this.o.env, aborted, visual,
      reasons: incompleteReasons(nav, aborted),
      notSeen: [...new Set([
        ...nav.blind,
        // joined under way (at a commit already made, or at the document's response): the page's
        // first requests may have gone out before the renderer's domains were on. Bodies of
        // requests never seen told of some (tests/extension/late-bodies.test.ts), but not of
        // all: an everyday load of the real-web /spa/ page joined at its response missed an
        // image with no event of it at all (1 run in about 40, 2026-11-28)
        ...(nav.late !== null ? ["requests_before_attach" as const] : []),
        ...([...nav.currentHops()].some((h) => h.workerScript === true && h.end === null) ? ["shared_worker_fetches" as const] : []),
      ])],
    })];
  }
}

/** Why a finished navigation's record is incomplete (empty: it is complete). */
function incompleteReasons(nav: Navigation, aborted: boolean): IncompleteReason[] {
  const out: IncompleteReason[] = [];
  if (aborted) out.push("aborted");
  if (nav.completion === "no_load_event") out.push("no_load_event");
  if (nav.completion === "cap_after_load") out.push("cap_after_load");
  if (nav.open(false) > 0) out.push("unfinished_requests");
  const cut = [...nav.requests.values()].some((hops) => hops.some((h) => !isLongLived(h) && cutShort(h)));
  if (cut || (nav.stoppedAt !== null && nav.loadAt === null)) out.push("stopped");
  if (nav.dialogBeforeLoad) out.push("dialog");
  if (nav.hiddenAtStart) out.push("hidden");
  return out;
}
