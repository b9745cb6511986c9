/**
 * WebSocket handlers. A WebSocket is not a Network.requestWillBeSent request: CDP reports it with
 * its own events (webSocketCreated, the handshake, frames, webSocketClosed). It is recorded as a
 * request of resource type "WebSocket": its handshake's start and status, the received frames'
 * payload bytes as its body, and its end when it closed. It never holds a record open or restarts
 * its quiet (request-state.ts LONG_LIVED); one still open at the record's end has `end_ms` null
 * and is counted in `page.open_at_end`. CDP gives it no connection id or protocol. A socket that
 * failed before it opened (refused, or answered other than 101) is a failed request: Chromium
 * says so only in `webSocketFrameError` (`socketFailure`), and for a refused one sends no
 * handshake request at all.
 */
import type { EventOf } from "../raw-event.ts";
import type { Hop } from "../request-state.ts";
import { isHttp, type TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

export function onWebSocketCreated(s: TabState, ev: EventOf<"Network.webSocketCreated">): Out {
  s.sockets.set(s.key(ev, ev.params.requestId), ev.params.url);
  return [];
}

export function onWebSocketWillSendHandshakeRequest(s: TabState, ev: EventOf<"Network.webSocketWillSendHandshakeRequest">): Out {
  socketHop(s, s.key(ev, ev.params.requestId), ev.params.requestId, ev.params.timestamp);
  return [];
}

/** The socket's request, begun at `start` (its handshake request, or its failure when it failed before one). */
function socketHop(s: TabState, k: string, requestId: string, start: number): Hop | null {
  const url = s.sockets.get(k);
  s.sockets.delete(k);
  if (!s.nav || url === undefined || s.nav.requests.has(k)) return null;
  // ws:// and wss:// are http:// and https:// upgraded (RFC 6455 section 3)
  if (!isHttp(url.replace(/^ws/, "http"))) return null;
  const hop: Hop = {
    requestId, hop: 0, url, method: "GET", type: "WebSocket", frameId: null, priority: null,
    start, response: null, responseAt: null, end: null, encodedBytes: 0, bodyBytes: 0,
    servedFromCache: false, failure: null, isMain: false, fromTiming: null,
  };
  s.nav.requests.set(k, [hop]);
  return hop;
}

/**
 * What a socket's `webSocketFrameError` before its opening says (Chromium 156's words:
 * "Error in connection establishment: net::ERR_CONNECTION_REFUSED", "Error during WebSocket
 * handshake: Unexpected response code: 404"): the `net::ERR_*` it names, else the recorder's own
 * "failed" (the message's other text never leaves the recorder), and the handshake's status if
 * it names one.
 */
export function socketFailure(message: string): { failure: string; status: number | null } {
  const net = /net::ERR_[A-Z0-9_]+/.exec(message);
  const code = /Unexpected response code: (\d{3})\b/.exec(message);
  return { failure: net ? net[0] : "failed", status: code ? Number(code[1]) : null };
}

/** A socket that failed before it opened; an error after its opening (101) ends it, as its close does. */
export function onWebSocketFrameError(s: TabState, ev: EventOf<"Network.webSocketFrameError">): Out {
  const p = ev.params;
  const h = s.hopOf(ev, p.requestId) ?? socketHop(s, s.key(ev, p.requestId), p.requestId, p.timestamp);
  if (!h || h.type !== "WebSocket" || h.end !== null || h.failure !== null) return [];
  if (h.responseAt === null || (h.handshakeStatus ?? 0) !== 101) {
    const { failure, status } = socketFailure(p.errorMessage);
    h.failure = failure;
    if (status !== null) h.handshakeStatus = status;
  }
  h.end = p.timestamp;
  return [];
}

export function onWebSocketHandshakeResponseReceived(
  s: TabState, ev: EventOf<"Network.webSocketHandshakeResponseReceived">,
): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (h && h.type === "WebSocket") {
    h.handshakeStatus = ev.params.response.status;
    h.responseAt = ev.params.timestamp;
  }
  return [];
}

/** A frame's payload in bytes: text frames (opcode 1) are UTF-8, binary ones (opcode 2) base64. */
function payloadBytes(opcode: number, data: string): number {
  if (opcode === 2) return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  return new TextEncoder().encode(data).length;
}

export function onWebSocketFrameReceived(s: TabState, ev: EventOf<"Network.webSocketFrameReceived">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (h && h.type === "WebSocket") h.bodyBytes += payloadBytes(ev.params.response.opcode, ev.params.response.payloadData);
  return [];
}

export function onWebSocketClosed(s: TabState, ev: EventOf<"Network.webSocketClosed">): Out {
  const h = s.hopOf(ev, ev.params.requestId);
  if (h && h.type === "WebSocket" && h.end === null) h.end = ev.params.timestamp;
  return [];
}
