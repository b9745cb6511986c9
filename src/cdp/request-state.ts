/**
 * One network request (one redirect hop) as the recorder accumulates it from Network.* events,
 * and its conversion to a RequestEntry (docs/RECORD.md). Times are kept as CDP monotonic
 * seconds until the record is built relative to navigation start.
 */
import type { Protocol } from "devtools-protocol";
import { familyOf } from "./family.ts";
import { applyDetail, hostOf } from "../record/url-detail.ts";
import type { RequestEntry, UrlDetail } from "../record/types.ts";

export interface Hop {
  requestId: string;
  hop: number;
  url: string;
  method: string;
  type: string;
  frameId: string | null;
  priority: string | null;
  start: number;
  response: Protocol.Network.Response | null;
  responseAt: number | null;
  end: number | null;
  encodedBytes: number;
  bodyBytes: number;
  /** Bytes on the wire reported chunk by chunk (Network.dataReceived encodedDataLength): what a
   * request that fails after its response began has received, loadingFinished giving none. */
  encodedReceived?: number;
  /** The last Network.dataReceived's time: the end of a document served from a prefetch, whose
   * loadingFinished is the prefetch's (fromPrefetch). */
  dataAt?: number;
  servedFromCache: boolean;
  failure: string | null;
  isMain: boolean;
  /** Set only for a main document known from the page's Navigation Timing (src/cdp/late.ts). */
  fromTiming: { protocol: string; status: number; mimeType: string; prefetched: boolean; fromServiceWorker: boolean } | null;
  /** Its end and bytes came from its frame's Navigation Timing (late.ts endFromFrameTiming): a
   * Network.loadingFinished that comes after all the same replaces them. */
  endFromFrame?: boolean;
  /** A WebSocket's handshake status (its response is not a Network.Response). */
  handshakeStatus?: number;
  /** The wire's answer was 304 Not Modified (Network.responseReceivedExtraInfo `statusCode`):
   * Chromium reports a revalidated document's response as the cached 200 it shows. */
  notModified?: boolean;
  /** A worker's script, fetched for the page (no loader of its own): its response and end come
   * on the worker's target, which the tab's session sees for a dedicated worker only. */
  workerScript?: boolean;
  /** CDP time of the request's last event of its own (its response, data, end); its start until one comes. */
  lastAt?: number;
  /** Open when its record ended, begun after the load event and silent for
   * navigation.ts LONG_POLL_SILENCE_MS: a long poll, open at the end like a stream. */
  longPoll?: boolean;
}

/** An iframe's document with its response and no end yet (late.ts endFromFrameTiming). */
export function isOpenFrameDocument(h: Hop): boolean {
  return !h.isMain && h.type === "Document" && h.response !== null && h.end === null && h.failure === null;
}

/** A header's value by its name in lower case (CDP keeps the wire's case: HTTP/1.1 `Content-Length`,
 * HTTP/2 and HTTP/3 `content-length`). */
export function headerOf(headers: Protocol.Network.Headers, name: string): string | undefined {
  return Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
}

/** A response whose body ended short of its Content-Length (no content coding, so the decoded
 * body is the wire body) although Chromium reported it finished: loading was stopped under it
 * (the stop button, Page.stopLoading, window.stop(): measured with Chromium 156, an image held
 * back by the server was reported finished at 1,024 of 65,536 bytes). */
export function cutShort(h: Hop): boolean {
  const r = h.response;
  if (r === null || h.failure !== null || r.status !== 200 || h.method === "HEAD") return false;
  const length = Number(headerOf(r.headers, "content-length"));
  const coding = headerOf(r.headers, "content-encoding");
  return Number.isFinite(length) && length > 0 && (coding === undefined || coding === "identity") &&
    // a prefetch reports no body bytes (its body goes to the cache, not to the page): the wire
    // bytes, which count the headers too, must fall short as well
    h.end !== null && Math.max(h.bodyBytes, h.encodedBytes) < length;
}

/** Resource types that stay open by design: they never hold a record open or restart its quiet,
 * and are counted in `page.open_at_end` when still open at its end. */
export const LONG_LIVED: ReadonlySet<string> = new Set(["EventSource", "WebSocket"]);

export function isLongLived(h: Hop): boolean {
  return LONG_LIVED.has(h.type);
}

/** A request still open keeps its navigation's record open (until the cap): not a long-lived
 * stream, nor a worker's script whose end may come on a target the tab does not see, nor a long
 * poll the record ended without. */
export function holdsOpen(h: Hop): boolean {
  return h.end === null && !isLongLived(h) && h.workerScript !== true && h.longPoll !== true;
}

export function newHop(
  p: Protocol.Network.RequestWillBeSentEvent, hop: number, isMain: boolean,
): Hop {
  const h: Hop = {
    requestId: p.requestId, hop, url: p.request.url, method: p.request.method,
    type: p.type ?? "Other", frameId: p.frameId ?? null, priority: p.request.initialPriority ?? null,
    start: p.timestamp, response: null, responseAt: null, end: null, encodedBytes: 0, bodyBytes: 0,
    encodedReceived: 0, servedFromCache: false, failure: null, isMain, fromTiming: null,
  };
  if (p.loaderId === "" && p.documentURL === p.request.url) h.workerScript = true;
  return h;
}

/** Ends a hop by a redirect: its response is `redirectResponse`, its end the next hop's start. */
export function endByRedirect(h: Hop, redirect: Protocol.Network.Response, at: number): void {
  h.response = redirect;
  h.responseAt = at;
  h.end = at;
  h.encodedBytes = Math.max(0, Math.round(redirect.encodedDataLength));
}

export function isDone(h: Hop): boolean {
  return h.end !== null;
}

const ms = (seconds: number, t0: number): number => Math.round((seconds - t0) * 1e6) / 1e3;

/** A document a speculation rule's prefetch had fetched: its response's timing and its
 * loadingFinished (time and bytes) are the prefetch's, seconds before this request (Chromium 156,
 * fixture rw-prefetch). The prefetch itself is flagged fromPrefetchCache too, though it is the
 * fetch that crossed the wire (fixture rw-late-prefetch). */
export function fromPrefetch(h: Hop): boolean {
  return h.response?.fromPrefetchCache === true && h.type !== "Prefetch";
}

function firstByte(h: Hop, t0: number): number | null {
  const t = fromPrefetch(h) ? undefined : h.response?.timing;
  if (t && t.requestTime > 0) {
    const start = t.receiveHeadersStart > 0 ? t.receiveHeadersStart : t.receiveHeadersEnd;
    if (start >= 0) return ms(t.requestTime + start / 1000, t0);
  }
  return h.responseAt === null ? null : ms(h.responseAt, t0);
}

const phase = (from: number, to: number): number | null =>
  from >= 0 && to >= from ? Math.round((to - from) * 1000) / 1000 : null;

type Phases = Pick<RequestEntry, "dns_ms" | "connect_ms" | "tls_ms" | "send_ms" | "wait_ms" | "receive_ms">;

/** The request's phases from Response.timing (ms offsets from `requestTime`, -1 when the phase
 * did not happen), as HAR's `timings` (chrome-har-capturer's reading): wait runs from the request
 * sent to the response headers received, receive from there to the request's end, so send, wait
 * and receive follow each other. (The first byte, `first_byte_ms`, is the headers' start.) */
function phases(h: Hop): Phases {
  const t = fromPrefetch(h) ? undefined : h.response?.timing;
  if (!t || t.requestTime <= 0) return { dns_ms: null, connect_ms: null, tls_ms: null, send_ms: null, wait_ms: null, receive_ms: null };
  const endMs = h.end === null ? -1 : (h.end - t.requestTime) * 1000;
  return {
    dns_ms: phase(t.dnsStart, t.dnsEnd),
    connect_ms: phase(t.connectStart, t.connectEnd),
    tls_ms: phase(t.sslStart, t.sslEnd),
    send_ms: phase(t.sendStart, t.sendEnd),
    wait_ms: t.sendEnd >= 0 ? phase(t.sendEnd, t.receiveHeadersEnd) : null,
    receive_ms: t.receiveHeadersEnd >= 0 && endMs >= 0 ? phase(t.receiveHeadersEnd, endMs) : null,
  };
}

export function toEntry(h: Hop, t0: number, detail: UrlDetail): RequestEntry {
  const r = h.response;
  const t = h.fromTiming;
  // a main document from Navigation Timing: only the HTTP (disk) cache serves documents
  const diskCache = r?.fromDiskCache === true || (t !== null && h.servedFromCache);
  const memoryCache = h.servedFromCache && !diskCache;
  const cached = diskCache || memoryCache || fromPrefetch(h) || t?.prefetched === true;
  const connectionId = !cached && r && r.connectionId > 0 ? r.connectionId : null;
  return {
    request_id: `${h.requestId}:${h.hop}`,
    url: applyDetail(h.url, detail),
    host: hostOf(h.url),
    resource_type: h.type,
    method: h.method,
    // 0 (no status, no port: e.g. a data: or opaque response) is null: the host takes 100-599
    // and 1-65535 (docs/RECORD.md "Limits")
    status: h.notModified === true ? 304 : r && r.status > 0 ? r.status : t && t.status > 0 ? t.status : h.handshakeStatus ?? null,
    mime_type: r?.mimeType || t?.mimeType || null,
    protocol: r?.protocol || t?.protocol || null,
    family: familyOf(r?.protocol || t?.protocol),
    connection_id: connectionId,
    connection_reused: r ? r.connectionReused : null,
    remote_ip: r?.remoteIPAddress || null,
    remote_port: r?.remotePort || null,
    encoded_bytes: h.encodedBytes,
    body_bytes: h.bodyBytes,
    from_disk_cache: diskCache,
    from_memory_cache: memoryCache,
    from_service_worker: r?.fromServiceWorker === true || t?.fromServiceWorker === true,
    priority: h.priority,
    alternate_protocol_usage: r?.alternateProtocolUsage ?? null,
    start_ms: ms(h.start, t0),
    first_byte_ms: firstByte(h, t0),
    end_ms: h.end === null ? null : ms(h.end, t0),
    failed: h.failure !== null,
    failure: h.failure,
    frame_id: h.frameId,
    is_main_document: h.isMain,
    ...phases(h),
  };
}

export { ms as relativeMs };
