/**
 * The replay tests' ground truth: what a DevTools log itself says about the requests a page made
 * before its load event, read straight from the raw events, sharing no code with the recorder
 * (src/cdp/) or the log reader (src/replay/). A deliberately plain reading of the protocol:
 * - the tab's own events are those without a sessionId, or marked `targetType: "page"`
 *   (Lighthouse's flattened sessions); other sessions are child targets (OOPIFs, workers);
 * - the main frame is the frame a root `Page.frameNavigated` without a parent names;
 * - a navigation is a root `Network.requestWillBeSent` of type Document in the main frame that is
 *   not a redirect hop of an earlier one; its load is the first root `Page.loadEventFired` after it
 *   (CDP: "Page.loadEventFired" has no frame: it is the target's main frame's);
 * - its requests before load: every http(s) request hop (any session) sent from its document
 *   request's time up to its load, except main-frame requests of another loader sent before the
 *   navigation committed (the previous document's, still loading);
 * - per hop: protocol and connection from its response (the redirect response for a redirected
 *   hop); no connection for a response from a cache (fromDiskCache, fromPrefetchCache,
 *   Network.requestServedFromCache) or with connectionId 0; encoded bytes from loadingFinished
 *   (the redirect response's for a redirected hop), unknown when the hop never finished; a CORS
 *   preflight (answered as type Preflight) ends with 0 there: its response's, read by its head
 *   (the lab's HTTP/1.1 NetLog: the 228 bytes of its connection no record held at 0);
 * - a speculation rule's prefetch (type Prefetch) is flagged fromPrefetchCache but is the fetch
 *   itself: its connection is its response's; a request the prefetch served gets the prefetch's
 *   loadingFinished, bytes that crossed the wire once, for the prefetch: 0 for it (caddy's log of
 *   the fixture rw-prefetch: next.html served once);
 * - a response with connectionId 0 from no cache and no service worker whose loadingFinished repeats
 *   its head's count (a dedicated worker's script: Chromium 156 does not count its body) has
 *   unknown bytes: the log alone cannot say them.
 */

type Obj = Record<string, unknown>;
interface Raw { method: string; params: Obj; sessionId?: string; targetType?: string }

export interface TruthHop {
  /** `${requestId}:${hop}`, as the record's request_id */
  id: string;
  url: string;
  session: string;
  start: number;
  protocol: string | null;
  connection: number | null;
  /** null: the hop never finished in the log (failed or still open) */
  bytes: number | null;
  fromServiceWorker: boolean;
  failed: boolean;
  type: string;
}

export interface TruthNavigation { url: string; loaderId: string; start: number; load: number | null; hops: TruthHop[] }

const obj = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function rawEvents(text: string): Raw[] {
  const body = text.trim();
  const list: unknown[] = body.startsWith("[") ? (JSON.parse(body) as unknown[]) :
    body.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as unknown);
  return list.map((v) => {
    const o = obj(v);
    return { method: str(o.method), params: obj(o.params), ...(typeof o.sessionId === "string" ? { sessionId: o.sessionId } : {}),
      ...(typeof o.targetType === "string" ? { targetType: o.targetType } : {}) };
  });
}

const isRoot = (e: Raw): boolean => e.sessionId === undefined || e.targetType === "page";
const isHttp = (u: string): boolean => /^https?:\/\//.test(u);

interface HopState extends TruthHop { key: string; cached: boolean; response: Obj | null; loaderId: string; frame: string }

function responseFacts(h: HopState): void {
  const r = h.response;
  if (r === null) return;
  h.protocol = str(r.protocol) || null;
  const cached = h.cached || r.fromDiskCache === true || (r.fromPrefetchCache === true && h.type !== "Prefetch");
  const c = num(r.connectionId);
  h.connection = cached || c === null || c <= 0 ? null : c;
  h.fromServiceWorker = r.fromServiceWorker === true;
}

export function readTruth(events: readonly Raw[]): TruthNavigation[] {
  const mainFrame = events.find((e) => isRoot(e) && e.method === "Page.frameNavigated" && !str(obj(e.params.frame).parentId));
  const frameId = str(obj(mainFrame?.params.frame).id);
  const hops: HopState[] = [];
  const current = new Map<string, HopState>();
  const navs: (TruthNavigation & { requestKey: string })[] = [];
  const loads: number[] = [];
  const commits: { loaderId: string; at: number }[] = [];
  let clock = 0;
  for (const e of events) {
    const p = e.params;
    const key = `${isRoot(e) ? "" : e.sessionId ?? ""}|${str(p.requestId)}`;
    const t = num(p.timestamp);
    if (t !== null && t < 1e9) clock = Math.max(clock, t); // wall-clock epochs are not CDP time
    if (e.method === "Network.requestWillBeSent") {
      const prev = current.get(key);
      const url = str(obj(p.request).url);
      if (prev && p.redirectResponse !== undefined) {
        prev.response = obj(p.redirectResponse);
        responseFacts(prev);
        prev.bytes = Math.round(num(prev.response.encodedDataLength) ?? 0);
      }
      const n = prev && p.redirectResponse !== undefined ? Number(prev.id.split(":").pop()) + 1 : 0;
      const h: HopState = {
        key, id: `${str(p.requestId)}:${n}`, url, session: isRoot(e) ? "" : e.sessionId ?? "", start: t ?? clock,
        protocol: null, connection: null, bytes: null, fromServiceWorker: false, failed: false, type: str(p.type) || "Other",
        cached: false, response: null, loaderId: str(p.loaderId), frame: str(p.frameId),
      };
      hops.push(h);
      current.set(key, h);
      if (isRoot(e) && p.type === "Document" && str(p.frameId) === frameId && n === 0) {
        navs.push({ url, loaderId: str(p.loaderId), start: h.start, load: null, hops: [], requestKey: key });
      }
      continue;
    }
    // a request the tab sent whose response comes on the child's target (a worker's script, an
    // OOPIF's document: same requestId), read from the child's session
    const h = current.get(key) ?? current.get(`|${str(p.requestId)}`);
    if (e.method === "Network.responseReceived" && h) {
      h.response = obj(p.response);
      responseFacts(h);
      if (p.type === "Preflight") h.type = "Preflight";
    }
    else if (e.method === "Network.requestServedFromCache" && h) { h.cached = true; responseFacts(h); }
    else if (e.method === "Network.loadingFinished" && h && h.bytes === null) {
      const finished = Math.round(num(p.encodedDataLength) ?? 0);
      const r = h.response;
      const head = Math.round(num(r?.encodedDataLength) ?? 0);
      // a response of no connection that no cache or worker answered, ending with its head's
      // count: a dedicated worker's script, whose body Chromium 156 does not count (the log
      // alone cannot say its bytes; the recorder's are held to the NetLog, test_realweb_e2e.py)
      const bodyUncounted = r !== null && r.connectionId === 0 && r.fromDiskCache !== true && r.fromServiceWorker !== true &&
        r.fromPrefetchCache !== true && head > 0 && finished === head;
      h.bytes = bodyUncounted ? null
        : r?.fromPrefetchCache === true && h.type !== "Prefetch" ? 0
        : h.type === "Preflight" ? head : finished;
    }
    else if (e.method === "Network.loadingFailed" && h) h.failed = true;
    else if (e.method === "Page.loadEventFired" && isRoot(e) && t !== null) loads.push(t);
    else if (e.method === "Page.frameNavigated" && isRoot(e) && str(obj(p.frame).id) === frameId) {
      commits.push({ loaderId: str(obj(p.frame).loaderId), at: clock });
    }
  }
  return navs.map((nav, i) => {
    const next = navs[i + 1]?.start ?? Infinity;
    const load = loads.find((l) => l >= nav.start && l < next) ?? null;
    const committed = commits.find((c) => c.loaderId === nav.loaderId)?.at ?? Infinity;
    const own = hops.filter((h) => {
      if (!isHttp(h.url) || h.start < nav.start || (load !== null && h.start > load) || (load === null && h.start >= next)) return false;
      // the previous document's requests, sent before this navigation committed
      return !(h.session === "" && h.frame === frameId && h.loaderId !== nav.loaderId && h.start < committed);
    });
    return { url: nav.url, loaderId: nav.loaderId, start: nav.start, load, hops: own.map((h): TruthHop => ({ id: h.id, url: h.url, session: h.session, start: h.start, protocol: h.protocol,
      connection: h.connection, bytes: h.bytes, fromServiceWorker: h.fromServiceWorker, failed: h.failed, type: h.type })) };
  });
}
