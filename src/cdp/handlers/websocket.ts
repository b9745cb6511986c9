/**
 * WebSocket handlers. A WebSocket is not a Network.requestWillBeSent request: CDP reports it with
 * its own events (webSocketCreated, the handshake, frames, webSocketClosed). It is recorded as a
 * request of resource type "WebSocket": its handshake's start and status, the received frames'
 * payload bytes as its body, and its end when it closed. It never holds a record open or restarts
 * its quiet (request-state.ts LONG_LIVED); one still open at the record's end has `end_ms` null
 * and is counted in `page.open_at_end`. CDP gives it no connection id or protocol.
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
  const p = ev.params;
  const k = s.key(ev, p.requestId);
  const url = s.sockets.get(k);
  s.sockets.delete(k);
  if (!s.nav || url === undefined || s.nav.requests.has(k)) return [];
  // ws:// and wss:// are http:// and https:// upgraded (RFC 6455 section 3)
  if (!isHttp(url.replace(/^ws/, "http"))) return [];
  const hop: Hop = {
    requestId: p.requestId, hop: 0, url, method: "GET", type: "WebSocket", frameId: null, priority: null,
    start: p.timestamp, response: null, responseAt: null, end: null, encodedBytes: 0, bodyBytes: 0,
    servedFromCache: false, failure: null, isMain: false, fromTiming: null,
  };
  s.nav.requests.set(k, [hop]);
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
