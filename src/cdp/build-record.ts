/**
 * Turns a completed Navigation into a NavigationRecord (docs/RECORD.md): times relative to the
 * main document's first request, URLs at the chosen detail, connections and hosts summarized.
 */
import type { Navigation } from "./navigation.ts";
import { relativeMs, toEntry } from "./request-state.ts";
import { connectionsOf, hostsOf } from "./summarize.ts";
import { applyDetail, originOf } from "../record/url-detail.ts";
import type { Histogram } from "../visual/histogram.ts";
import { navigationVisuals } from "../visual/metrics.ts";
import {
  NOT_SEEN, RECORD_SCHEMA, type BrowserInfo, type IncompleteReason, type Milestones, type NavigationRecord, type NetworkInfo, type NotSeen,
  type RequestEntry, type Source, type UrlDetail,
} from "../record/types.ts";

export interface RecordEnv {
  browser: BrowserInfo;
  extension_version: string;
  network: NetworkInfo | null;
}

/** A screencast frame: when it was shown (epoch seconds) and its histogram. */
export interface WallFrame { wall: number; histogram: Histogram }

export interface BuildOptions {
  id: string;
  source: Source;
  urlDetail: UrlDetail;
  env: RecordEnv;
  /** Ended before its load event: replaced by another navigation, tab closed, detached. */
  aborted: boolean;
  /** The frames around it and its commit (CDP seconds), when its visual metrics are wanted. */
  visual?: { frames: readonly WallFrame[]; commitAt: number | null } | null;
  /** Why it is incomplete (tab-state.ts); empty when complete. */
  reasons?: readonly IncompleteReason[];
  /** What the recorder knows it could not see, beside what the requests show. */
  notSeen?: readonly NotSeen[];
}

/** What the tab's DevTools session could not see of this load (docs/RECORD.md "What DevTools
 * cannot see"): a service worker's own fetches run in the worker's target, which the tab's
 * session is not attached to; CDP gives a WebSocket no connection id or protocol, and a
 * download's transfer goes to the browser's download manager; `known`: what the recorder saw it
 * could not see (a shared worker's script never ended, Early Hints preloads). */
function notSeen(nav: Navigation, requests: readonly RequestEntry[], known: readonly NotSeen[]): NotSeen[] {
  const out = new Set<NotSeen>(known);
  if (requests.some((r) => r.from_service_worker)) out.add("service_worker_fetches");
  if (requests.some((r) => r.resource_type === "WebSocket")) out.add("websocket_connections");
  if (nav.downloads > 0) out.add("download_transfers");
  return NOT_SEEN.filter((n) => out.has(n));
}

/** The record's requests, every redirect hop one, in order of start. */
function entries(nav: Navigation, detail: UrlDetail): RequestEntry[] {
  const requests: RequestEntry[] = [];
  const zero = nav.zero;
  for (const hops of nav.requests.values()) {
    for (const h of hops) requests.push(toEntry(h, zero, detail));
  }
  return requests.sort((a, b) => a.start_ms - b.start_ms);
}

/** The milestones: lifecycle events (monotonic), LCP and painted frames (wall clock). */
function milestones(
  nav: Navigation, requests: readonly RequestEntry[], zeroWall: number, visualOf: BuildOptions["visual"],
): Milestones {
  const zero = nav.zero;
  const at = (s: number | null): number | null => (s === null ? null : relativeMs(s, zero));
  const atWall = (s: number | null): number | null => (s === null ? null : relativeMs(s, zeroWall));
  const main = requests.filter((r) => r.is_main_document);
  const images = requests.filter((r) => r.resource_type === "Image" && !r.failed && r.end_ms !== null);
  const visual = visualOf ? navigationVisuals(
    visualOf.frames.map((f) => ({ t: atWall(f.wall) ?? 0, histogram: f.histogram })), at(visualOf.commitAt)) : null;
  const ms = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 1000) / 1000);
  // a paint after the page was hidden times the user's return to it, not the page: none (as the
  // web-vitals library and CrUX have it, FCP and LCP only while the page was never hidden)
  const hidden = nav.hiddenWall;
  const shown = (ms: number | null): number | null => {
    const h = atWall(hidden);
    return ms === null || h === null || ms < h ? ms : null;
  };
  const lcps = hidden === null ? nav.lcpWalls : nav.lcpWalls.filter((t) => t < hidden);
  return {
    ttfb_ms: main[main.length - 1]?.first_byte_ms ?? null,
    fcp_ms: shown(at(nav.fcpAt) ?? atWall(nav.paintFcpWall)),
    lcp_ms: atWall(lcps[lcps.length - 1] ?? null),
    dcl_ms: at(nav.dclAt),
    load_ms: at(nav.loadAt),
    first_image_ms: images.length ? Math.min(...images.map((r) => r.end_ms ?? Infinity)) : null,
    first_visual_change_ms: ms(visual?.first_visual_change_ms),
    speed_index_ms: ms(visual?.speed_index_ms),
    visual_complete_85_ms: ms(visual?.visual_complete_85_ms),
    visual_complete_99_ms: ms(visual?.visual_complete_99_ms),
    last_visual_change_ms: ms(visual?.last_visual_change_ms),
  };
}

/** The page's URL before any reduction: its main document's last hop, or the navigation's own. */
export function finalUrlOf(nav: Navigation): string {
  const mainHops = nav.requests.get(nav.mainKey) ?? [];
  return mainHops[mainHops.length - 1]?.url ?? nav.url ?? "";
}

export function buildRecord(nav: Navigation, o: BuildOptions): NavigationRecord {
  // epoch seconds of the zero: the main request's wallTime/timestamp pair maps wall to monotonic
  const zeroWall = nav.epochZero;
  const requests = entries(nav, o.urlDetail);
  const mainHops = nav.requests.get(nav.mainKey) ?? [];
  const finalUrl = finalUrlOf(nav);
  const main = requests.filter((r) => r.is_main_document);
  const reasons = [...(o.reasons ?? [])];
  const warm = main[main.length - 1]?.connection_reused === true ||
    requests.some((r) => r.from_disk_cache || r.from_memory_cache);
  return {
    schema: RECORD_SCHEMA,
    id: o.id,
    source: o.source,
    page: {
      url: applyDetail(finalUrl, o.urlDetail),
      origin: originOf(finalUrl),
      url_detail: o.urlDetail,
      started_at_ms: Math.round(zeroWall * 1e6) / 1e3,
      browser: o.env.browser,
      extension_version: o.env.extension_version,
      network: o.env.network,
      warm,
      redirects: mainHops.slice(0, -1).map((h) => applyDetail(h.url, o.urlDetail)),
      aborted: o.aborted || nav.mainFailure === "net::ERR_ABORTED",
      error: nav.mainFailure,
      late_attach: nav.late,
      kind: nav.kind,
      incomplete: reasons.length > 0,
      incomplete_reasons: reasons,
      open_at_end: nav.open(true),
      downloads: nav.downloads,
      not_seen: notSeen(nav, requests, o.notSeen ?? []),
    },
    milestones: milestones(nav, requests, zeroWall, o.visual),
    requests,
    connections: connectionsOf(requests),
    hosts: hostsOf(requests),
    context: {},
  };
}
