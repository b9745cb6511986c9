/**
 * The recorder core: raw CDP events of one tab in, NavigationRecords out. Pure: no chrome.*, no
 * clock. Each event goes to its named handler (src/cdp/handlers/); time comes from the events'
 * own CDP monotonic timestamps (src/cdp/event-clock.ts), and completion (network quiet after
 * load, caps) is decided by `poll(now)`, `now` in CDP monotonic seconds, which the adapter calls
 * from a timer (src/cdp/clock.ts maps its local clock to CDP time) and fromLog calls per event.
 */
import { monotonicTime } from "./event-clock.ts";
import { dispatch } from "./handlers/index.ts";
import { Navigation } from "./navigation.ts";
import type { RawEvent } from "./raw-event.ts";
import { isOpenFrameDocument } from "./request-state.ts";
import { TabState, isHttp, type RecorderOptions } from "./tab-state.ts";
import type { NavigationRecord } from "../record/types.ts";

export { MAX_FRAMES, type RecorderOptions } from "./tab-state.ts";

/** Just attached, nothing joined yet: does `ev` show the main frame's document already
 * committed and loading (a subresource request of its own, a lifecycle event past the commit)?
 * A worker's script is requested in the main frame with no loader (`loaderId` ""): it names no
 * document (fixture rw-late-workers: /workers/'s two came before the replayed commit, and until
 * 2026-11-29 began a navigation of no document, so the page had no record). */
function midLoad(ev: RawEvent, mainFrameId: string | null): { t: number; loaderId: string } | null {
  if (ev.sessionId !== undefined || mainFrameId === null) return null;
  if (ev.method === "Network.requestWillBeSent") {
    const p = ev.params;
    if (p.frameId !== mainFrameId || p.type === "Document" || p.requestId === p.loaderId || p.loaderId === "" ||
        !isHttp(p.documentURL) || !isHttp(p.request.url)) return null;
    return { t: p.timestamp, loaderId: p.loaderId };
  }
  if (ev.method === "Page.lifecycleEvent") {
    const p = ev.params;
    if (p.frameId !== mainFrameId || p.name === "init" || p.name === "commit") return null;
    return { t: p.timestamp, loaderId: p.loaderId };
  }
  return null;
}

/** Attached for a same-document navigation already made (RecorderOptions.softAttach): it starts
 * at the first request the tab makes that is not a document load of its own. */
function softAtAttach(ev: RawEvent, s: TabState): Navigation | null {
  const url = s.o.softAttach;
  if (url === undefined || ev.method !== "Network.requestWillBeSent") return null;
  const p = ev.params;
  if (!isHttp(p.request.url) || s.isMainNavigation(ev.sessionId, p.type, p.requestId, p.loaderId, p.frameId, p.documentURL,
    p.request.url)) return null;
  return new Navigation(p.timestamp, p.wallTime, p.loaderId, s.mainFrameId ?? "", `|soft@${p.timestamp}`, null, "soft", url);
}

export class Recorder {
  private readonly s: TabState;

  constructor(options: RecorderOptions) {
    this.s = new TabState(options);
  }

  /** Epoch minus CDP monotonic seconds, from the tab's last request (null before one came). */
  get wallOffset(): number | null {
    return this.s.wallOffset;
  }

  /** The unreduced URL of a record this recorder built lately (by id). */
  fullUrl(id: string): string | undefined {
    return this.s.fullUrls.get(id);
  }

  /** A navigation is being recorded (the adapter keeps polling while true). */
  get active(): boolean {
    return this.s.nav !== null || this.s.pending !== null;
  }

  /** Feeds one event; returns records it completed (a navigation replaced by a new one). `now`:
   * the adapter's CDP time when it has one, for events that carry no time of their own;
   * `wallOffset`: a replayed log's (raw-event.ts), when nothing before it gave one. */
  push(ev: RawEvent, now: number | null = null, wallOffset: number | null = null): NavigationRecord[] {
    const s = this.s;
    s.wallOffset ??= wallOffset;
    const t = monotonicTime(ev) ?? now;
    if (t !== null && (s.now === null || t > s.now)) s.now = t;
    const soft = s.joined || s.nav !== null ? null : softAtAttach(ev, s);
    if (soft !== null) {
      s.begin(soft, true);
      soft.declare("requests_before_attach");
    }
    const mid = s.joined || s.nav !== null ? null : midLoad(ev, s.mainFrameId);
    if (mid !== null && s.mainFrameId !== null) {
      // attached during a cross-process commit (a tab that showed chrome://newtab): the commit's
      // lifecycle replay went to the old document, so the first sign of the new one is one of its
      // own requests or a later lifecycle event (src/cdp/late.ts, "commit")
      s.begin(new Navigation(mid.t, NaN, mid.loaderId, s.mainFrameId, `|${mid.loaderId}`, "commit"), true);
    }
    const out = dispatch(s, ev);
    if (s.nav !== null) s.joined = true;
    return out;
  }

  /** Whether `poll(now)` would complete a navigation (the current one, or a stale pending one). */
  due(now: number): boolean {
    const s = this.s;
    return s.pending?.completes(now, s.limits) != null || s.nav?.completes(now, s.limits) != null;
  }

  /** Completes the current navigation if, at CDP time `now` (seconds), it is done. */
  poll(now: number): NavigationRecord[] {
    const s = this.s;
    // a pending navigation that never commits (no abort reported either) gives up at the cap
    const stale = s.pending?.completes(now, s.limits) != null ? s.abandonPending() : [];
    const nav = s.nav;
    const completion = nav?.completes(now, s.limits) ?? null;
    if (nav === null || completion === null) return stale;
    nav.completion = completion;
    // open at the end, counted in open_at_end, not unfinished (request-state.ts holdsOpen)
    if (completion === "quiet") for (const h of nav.longPolls(now)) h.longPoll = true;
    return [...stale, ...s.finish(false)];
  }

  /** The navigation seen from its request whose document committed before the attach's enables
   * were all done (everyday: the attach at a navigation races it; CI run 49, a script redirect's
   * landing page): a first paint before Page.setLifecycleEventsEnabled took effect is not always
   * in its replay, and a document made before the LCP script was added never ran it. */
  get committedDuringEnable(): boolean {
    const nav = this.s.nav;
    return nav !== null && nav.kind === "navigation" && nav.late === null && this.s.committed;
  }

  /** The loader of the document navigation under way (pending, or current and seen from its
   * request), or null. */
  get underWay(): string | null {
    const nav = this.s.pending ?? this.s.nav;
    return nav !== null && nav.kind === "navigation" && nav.late === null ? nav.loaderId : null;
  }

  /** The current navigation is `loaderId`'s, seen from its request, and no LCP candidate came. */
  lacksLcp(loaderId: string): boolean {
    const nav = this.s.nav;
    return nav !== null && nav.loaderId === loaderId && nav.late === null && nav.lcpWall === null;
  }

  /** A late navigation waits for the page's Navigation Timing (the adapter relays it after load). */
  get wantsNavigationTiming(): boolean {
    const nav = this.s.nav;
    if (nav === null || nav.late === null) return false;
    // relayed once before the document's end (session.ts afterAttach): once more for that end
    const main = nav.current(nav.mainKey);
    return nav.zeroWall === null || (main?.fromTiming != null && main.end === null);
  }

  /** Frames (ids) whose document has its response and no end (late.ts endFromFrameTiming): the
   * adapter relays each one's Navigation Timing at its load event, or at the page's. */
  get framesWanted(): string[] {
    const nav = this.s.nav;
    if (nav === null) return [];
    const out: string[] = [];
    for (const h of nav.currentHops()) {
      if (isOpenFrameDocument(h) && h.frameId !== null) out.push(h.frameId);
    }
    return out;
  }

  /** Joined late (at a replayed commit, or at the document's response) with the load event
   * replayed too: it loaded before the attach took effect, so no Page.loadEventFired will come
   * to ask for the load metrics (the adapter knows whether that was just now or long ago). A
   * fast page opened in a new tab, joined at its response, was left with its document unfinished
   * before (the real-web /prerender/, fixture rw-late-prefetch). */
  get joinedAfterLoad(): boolean {
    return this.wantsNavigationTiming && this.s.nav?.late != null && this.s.nav.loadAt !== null;
  }

  /** Ends recording (tab closed, detached, end of a log): whatever is open is emitted. */
  flush(): NavigationRecord[] {
    return [...this.s.finish(true), ...this.s.abandonPending()];
  }
}
