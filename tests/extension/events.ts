/** Builders of synthetic CDP events for recorder unit tests (shapes as Chromium 156 sends them). */
import type { Protocol } from "devtools-protocol";
import { LCP_BINDING } from "../../src/cdp/enable-commands.ts";
import { FRAME_EVENT, type RawEvent } from "../../src/cdp/raw-event.ts";
import type { RecorderOptions } from "../../src/cdp/recorder.ts";
import { fixedIds } from "../../scripts/fixture-io.ts";

export const FRAME = "MAINFRAME";

export function options(extra: Partial<RecorderOptions> = {}): RecorderOptions {
  return {
    source: "passive", urlDetail: "full", newId: fixedIds(),
    env: { browser: { name: "Chromium", version: "test" }, extension_version: "0.0.0", network: null },
    ...extra,
  };
}

export function request(id: string, url: string, t: number, o: { type?: Protocol.Network.ResourceType; loaderId?: string; frameId?: string; sessionId?: string; redirect?: Protocol.Network.Response } = {}): RawEvent {
  const params: Protocol.Network.RequestWillBeSentEvent = {
    requestId: id, loaderId: o.loaderId ?? "L1", documentURL: url,
    request: { url, method: "GET", headers: {}, initialPriority: "High", referrerPolicy: "no-referrer" },
    timestamp: t, wallTime: 1_700_000_000 + t, initiator: { type: "other" }, redirectHasExtraInfo: false,
    type: o.type ?? "Image", frameId: o.frameId ?? FRAME,
  };
  if (o.redirect) params.redirectResponse = o.redirect;
  const ev: RawEvent = { method: "Network.requestWillBeSent", params };
  if (o.sessionId !== undefined) ev.sessionId = o.sessionId;
  return ev;
}

export function navigation(id: string, url: string, t: number): RawEvent {
  return request(id, url, t, { type: "Document", loaderId: id });
}

export function response(url: string, o: { connectionId?: number; protocol?: string; fromDiskCache?: boolean; status?: number; encoded?: number } = {}): Protocol.Network.Response {
  return {
    url, status: o.status ?? 200, statusText: "", headers: {}, mimeType: "text/plain", charset: "",
    connectionReused: false, connectionId: o.connectionId ?? 1, encodedDataLength: o.encoded ?? 100,
    securityState: "secure", protocol: o.protocol ?? "h2", fromDiskCache: o.fromDiskCache ?? false,
    remoteIPAddress: "127.0.0.1", remotePort: 443,
  };
}

export function received(id: string, t: number, r: Protocol.Network.Response, sessionId?: string): RawEvent {
  const ev: RawEvent = { method: "Network.responseReceived", params: { requestId: id, loaderId: "L1", timestamp: t, type: "Image", response: r, hasExtraInfo: false } };
  if (sessionId !== undefined) ev.sessionId = sessionId;
  return ev;
}

export function finished(id: string, t: number, bytes: number, sessionId?: string): RawEvent {
  const ev: RawEvent = { method: "Network.loadingFinished", params: { requestId: id, timestamp: t, encodedDataLength: bytes } };
  if (sessionId !== undefined) ev.sessionId = sessionId;
  return ev;
}

export function failed(id: string, t: number, errorText: string): RawEvent {
  return { method: "Network.loadingFailed", params: { requestId: id, timestamp: t, type: "Image", errorText } };
}

export function lifecycle(name: string, loaderId: string, t: number): RawEvent {
  return { method: "Page.lifecycleEvent", params: { frameId: FRAME, loaderId, name, timestamp: t } };
}

/** A finished request: will-be-sent, response, loading-finished. */
export function fetched(id: string, url: string, t: number, bytes: number, conn = 1): RawEvent[] {
  return [request(id, url, t), received(id, t + 0.01, response(url, { connectionId: conn })), finished(id, t + 0.02, bytes)];
}

/** The main frame committed the navigation whose loader is `loaderId`. */
export function committed(loaderId: string, url: string): RawEvent {
  return {
    method: "Page.frameNavigated",
    params: {
      type: "Navigation",
      frame: {
        id: FRAME, loaderId, url, domainAndRegistry: "a.test", securityOrigin: new URL(url).origin,
        mimeType: "text/html", secureContextType: "Secure", crossOriginIsolatedContextType: "NotIsolated",
        gatedAPIFeatures: [],
      },
    },
  };
}

/** A largest-contentful-paint candidate at `wall` epoch seconds, as the LCP binding reports it
 * (src/cdp/enable-commands.ts); `payload` replaces the JSON. */
export function lcpCandidate(wall: number, o: { name?: string; sessionId?: string; payload?: string } = {}): RawEvent {
  const ev: RawEvent = {
    method: "Runtime.bindingCalled",
    params: { name: o.name ?? LCP_BINDING, payload: o.payload ?? JSON.stringify({ t: wall * 1000 }), executionContextId: 7 },
  };
  if (o.sessionId !== undefined) ev.sessionId = o.sessionId;
  return ev;
}

/** A relayed screencast frame shown at `wall` epoch seconds: a 768-bin histogram with `content`
 * non-white pixels of one colour (src/visual/histogram.ts), as the session core relays it. */
export function paintedFrame(wall: number, content: number, o: { sessionId?: string; histogram?: unknown } = {}): RawEvent {
  const histogram = new Array<number>(768).fill(0);
  histogram[200] = content;
  histogram[256 + 30] = content;
  histogram[512 + 30] = content;
  const ev = { method: FRAME_EVENT, params: { wallTime: wall, histogram: o.histogram ?? histogram } } as RawEvent;
  if (o.sessionId !== undefined) ev.sessionId = o.sessionId;
  return ev;
}
