/**
 * One top-level navigation while it is being recorded: its requests (from every session of the
 * tab, OOPIFs included), its page milestones, and the rule for when it is complete.
 */
import type { LateAttach } from "./late.ts";
import { holdsOpen, type Hop } from "./request-state.ts";
import type { NotSeen, PageKind } from "../record/types.ts";

export interface Limits {
  /** Network quiet this long after the load event ends the record (and, with the screencast, no
   * change of the picture for as long, or the network's quiet twice as long: `completes`). */
  quietMs: number;
  /** Hard stop this long after the load event (or the main document's failure). */
  maxAfterLoadMs: number;
  /** Hard stop this long after navigation start if the load event never comes. */
  maxWithoutLoadMs: number;
}

/** How long a fetch begun after the load event may be silent (no response, no data) before it is
 * taken for a long poll (`Navigation.longPolls`). Long enough for a request held up by two
 * retransmission timeouts in a row on a lossy path (RFC 6298: 1 s, then 2 s), which a lab
 * profile can cause and which must still be waited for; well below a long poll's own timeout
 * (CometD's default, 30 s; the record's cap after load is 30 s too). Not from the papers. */
export const LONG_POLL_SILENCE_MS = 5000;
const POLL_TYPES: ReadonlySet<string> = new Set(["XHR", "Fetch"]);

export const DEFAULT_LIMITS: Limits = { quietMs: 2000, maxAfterLoadMs: 30000, maxWithoutLoadMs: 120000 };

/** Why a navigation's record ended on its own: the network's quiet after load (complete), or a
 * cap (the record is incomplete, docs/RECORD.md "Incomplete records"). */
export type Completion = "quiet" | "cap_after_load" | "no_load_event";

export class Navigation {
  /** request key (session + requestId) -> its hops, in order; the last one is current. */
  readonly requests = new Map<string, Hop[]>();
  /** Requests seen before this navigation committed that are not its own (another loader's):
   * the previous document's, still loading until the commit replaces it. Dropped at commit. */
  readonly beforeCommit = new Set<string>();
  loadAt: number | null = null;
  dclAt: number | null = null;
  fcpAt: number | null = null;
  /** The largest-contentful-paint candidates' times, epoch seconds, as they came (the last one
   * before the page was hidden is its LCP). */
  readonly lcpWalls: number[] = [];
  /** The latest largest-contentful-paint candidate's time, epoch seconds. */
  get lcpWall(): number | null {
    return this.lcpWalls[this.lcpWalls.length - 1] ?? null;
  }
  /** When the page was first hidden, epoch seconds (null: never, as far as it reported), and
   * whether it was hidden from its start (a background tab): enable-commands.ts LCP_SCRIPT. */
  hiddenWall: number | null = null;
  hiddenAtStart = false;
  mainFailure: string | null = null;
  mainFailedAt: number | null = null;
  /** The main frame stopped loading before its load event (the stop button, Page.stopLoading,
   * window.stop()): Chromium then fires no load event, and the record settles here. */
  stoppedAt: number | null = null;
  /** A JavaScript dialog (alert, confirm, prompt, beforeunload) of one of the page's frames
   * opened before its load event: the page waited on whoever closed it, so its timings are not
   * the network's (docs/RECORD.md "Incomplete records", `dialog`). */
  dialogBeforeLoad = false;
  /** The page's own first-contentful-paint entry (epoch seconds: its timeOrigin plus the
   * entry's startTime), relayed for a navigation that committed while the attach's enables were
   * under way (session.ts afterAttach); used when no lifecycle event gave the paint. On the wall
   * clock, as LCP: the load metrics that give `navStart` may come before Performance.enable took
   * effect (an everyday landing page's had no NavigationStart, 2026-11-29). */
  paintFcpWall: number | null = null;
  /** performance.timeOrigin in CDP seconds, from Performance.getMetrics (enable-commands.ts). */
  navStart: number | null = null;
  lastActivity: number;
  /** The last change of the picture the screencast showed (CDP seconds; null: none since the
   * start, or no screencast): see `completes`. */
  lastPaint: number | null = null;
  /** Epoch seconds of `zero` from the page's own performance.timeOrigin (late attach only). */
  zeroWall: number | null = null;
  /** Downloads the page started (Page.downloadWillBegin of its frames, or a navigation answered
   * with an attachment), by URL: each is counted once whichever way it showed. */
  readonly downloadUrls = new Set<string>();
  get downloads(): number {
    return this.downloadUrls.size;
  }
  /** How the record ended on its own (null: not yet, or cut from outside). */
  completion: Completion | null = null;
  /** A pending navigation that turned out to be a download: it makes no record. */
  download = false;
  /** What the recorder knows it missed of this navigation (docs/RECORD.md "What DevTools cannot see"). */
  readonly blind: NotSeen[] = [];

  /** Says the record misses `what` (once). */
  declare(what: NotSeen): void {
    if (!this.blind.includes(what)) this.blind.push(what);
  }

  constructor(
    readonly t0: number,
    /** Epoch seconds at t0; NaN until known (a navigation with no request of its own takes it
     * from the tab's next request). */
    public wallTime: number,
    readonly loaderId: string,
    readonly frameId: string,
    readonly mainKey: string,
    /** How this navigation's start was missed (src/cdp/late.ts); null when seen from its request. */
    readonly late: LateAttach | null = null,
    readonly kind: PageKind = "navigation",
    /** The page's URL when no main document request carries it (soft, bfcache). */
    readonly url: string | null = null,
  ) {
    this.lastActivity = t0;
  }

  current(key: string): Hop | undefined {
    const hops = this.requests.get(key);
    return hops?.[hops.length - 1];
  }

  /** The zero of the record's times: the page's navigation start when known. A navigation that
   * loads no document (soft, bfcache) starts at its event, which carries no time of its own: the
   * extension times it at its delivery, which can come after requests it caused had begun (three
   * lab browsers on two cores, 2026-11-29: a route's image had ended 10.7 ms before it, and the
   * host refused the record's negative first image), so it starts no later than its first request. */
  get zero(): number {
    if (this.navStart !== null) return this.navStart;
    let z = this.t0;
    if (this.kind === "navigation") return z;
    for (const hops of this.requests.values()) for (const h of hops) if (h.start < z) z = h.start;
    return z;
  }

  /** Epoch seconds at `zero`: the page's own timeOrigin when relayed, else the main request's
   * wallTime/timestamp pair mapping wall to monotonic time. */
  get epochZero(): number {
    return this.zeroWall ?? this.wallTime - (this.t0 - this.zero);
  }

  touch(at: number): void {
    if (at > this.lastActivity) this.lastActivity = at;
  }

  /** The picture changed at `at` (CDP seconds). */
  painted(at: number): void {
    if (this.lastPaint === null || at > this.lastPaint) this.lastPaint = at;
  }

  /** Requests without an end; `all`: every one, else those that hold the record open
   * (request-state.ts holdsOpen: not long-lived streams, not workers' scripts). */
  open(all: boolean): number {
    let n = 0;
    for (const h of this.currentHops()) {
      if (all ? h.end === null : holdsOpen(h)) n += 1;
    }
    return n;
  }

  /** Requests that hold the record open (`open(false)`) though they are long polls at `now`:
   * fetches (XHR, Fetch) begun after the navigation settled with no event of their own for
   * LONG_POLL_SILENCE_MS. A chat's or a live page's hanging GET is answered when the server has
   * news, or at its own timeout, tens of seconds later: it would hold every such page's record to
   * the cap after load and mark it incomplete. */
  longPolls(now: number): Hop[] {
    return this.afterLoadFetches().filter((h) => (now - (h.lastAt ?? h.start)) * 1000 >= LONG_POLL_SILENCE_MS);
  }

  /** Fetches (XHR, Fetch) begun after the navigation settled that still hold it open. */
  private afterLoadFetches(): Hop[] {
    const settled = this.settled;
    if (settled === null) return [];
    return [...this.currentHops()].filter((h) => holdsOpen(h) && POLL_TYPES.has(h.type) && h.start >= settled);
  }

  /** The last hop of every request. */
  *currentHops(): Generator<Hop> {
    for (const hops of this.requests.values()) {
      const h = hops[hops.length - 1];
      if (h !== undefined) yield h;
    }
  }

  /** When the navigation counts as settled: its load event, its main document's failure, or,
   * for a soft navigation or a back/forward-cache restore (no load event), its start. */
  get settled(): number | null {
    return this.loadAt ?? this.mainFailedAt ?? this.stoppedAt ?? (this.kind === "navigation" ? null : this.t0);
  }

  /** Whether, at CDP time `now` (seconds), the record is done, and why (null: not yet). */
  completes(now: number, limits: Limits): Completion | null {
    const settled = this.settled;
    if (settled === null) return (now - this.t0) * 1000 >= limits.maxWithoutLoadMs ? "no_load_event" : null;
    // Joined late, the ends of requests (and of out-of-process frames' documents) that were under
    // way at the attach may never be reported (measured: an OOPIF document's loadingFinished
    // went missing): only the network events' quiet counts, not requests still open. Long-lived
    // streams never hold a record open.
    // The picture settles too: a change the screencast showed holds the record open like a
    // network event (the visual metrics end at the last change seen), but for one more quiet at
    // most, so that a page that never stops moving (an animation, a video) still ends.
    const netQuietMs = (now - Math.max(this.lastActivity, settled)) * 1000;
    const paintQuietMs = this.lastPaint === null ? Infinity : (now - this.lastPaint) * 1000;
    // a fetch begun after the load event holds it open until it ends or is taken for a long
    // poll (longPolls), joined late or not
    const fetches = this.afterLoadFetches();
    const polls = this.longPolls(now).length;
    const holding = this.late !== null ? fetches.length - polls : this.open(false) - polls;
    const quiet = holding === 0 && netQuietMs >= limits.quietMs &&
      (paintQuietMs >= limits.quietMs || netQuietMs >= 2 * limits.quietMs);
    if (quiet) return "quiet";
    return (now - settled) * 1000 >= limits.maxAfterLoadMs ? "cap_after_load" : null;
  }
}
