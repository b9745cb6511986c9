/**
 * The recorder's handler map: one named handler per DevTools event it reads, as Lighthouse's
 * network recorder has one per Network event. An event without a handler changes nothing.
 */
import { FRAME_EVENT, type RawEvent } from "../raw-event.ts";
import type { TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";
import {
  onDataReceived, onLoadingFailed, onLoadingFinished, onRequestServedFromCache, onRequestWillBeSent,
  onResponseReceived, onResponseReceivedEarlyHints, onResponseReceivedExtraInfo,
} from "./network.ts";
import {
  onAttachedToTarget, onDomContentEventFired, onDownloadWillBegin, onFrameAttached, onFrameNavigated, onFrameStoppedLoading,
  onJavascriptDialogOpening, onLifecycleEvent, onLoadEventFired, onNavigatedWithinDocument, onWorkerVersionUpdated,
} from "./page.ts";
import { onFrameHistogram } from "./paint.ts";
import { onBindingCalled, onMetrics } from "./runtime.ts";
import {
  onWebSocketClosed, onWebSocketCreated, onWebSocketFrameError, onWebSocketFrameReceived,
  onWebSocketHandshakeResponseReceived, onWebSocketWillSendHandshakeRequest,
} from "./websocket.ts";

type Handler<M extends RawEvent["method"]> = (s: TabState, ev: Extract<RawEvent, { method: M }>) => NavigationRecord[];
type Handlers = { readonly [M in RawEvent["method"]]?: Handler<M> };

export const HANDLERS = {
  "Network.requestWillBeSent": onRequestWillBeSent,
  "Network.responseReceived": onResponseReceived,
  "Network.dataReceived": onDataReceived,
  "Network.loadingFinished": onLoadingFinished,
  "Network.loadingFailed": onLoadingFailed,
  "Network.requestServedFromCache": onRequestServedFromCache,
  "Network.responseReceivedEarlyHints": onResponseReceivedEarlyHints,
  "Network.responseReceivedExtraInfo": onResponseReceivedExtraInfo,
  "Network.webSocketCreated": onWebSocketCreated,
  "Network.webSocketWillSendHandshakeRequest": onWebSocketWillSendHandshakeRequest,
  "Network.webSocketHandshakeResponseReceived": onWebSocketHandshakeResponseReceived,
  "Network.webSocketFrameReceived": onWebSocketFrameReceived,
  "Network.webSocketClosed": onWebSocketClosed,
  "Network.webSocketFrameError": onWebSocketFrameError,
  "Page.frameAttached": onFrameAttached,
  "Page.frameNavigated": onFrameNavigated,
  "Page.lifecycleEvent": onLifecycleEvent,
  "Page.loadEventFired": onLoadEventFired,
  "Page.domContentEventFired": onDomContentEventFired,
  "Page.navigatedWithinDocument": onNavigatedWithinDocument,
  "Page.frameStoppedLoading": onFrameStoppedLoading,
  "ServiceWorker.workerVersionUpdated": onWorkerVersionUpdated,
  "Page.downloadWillBegin": onDownloadWillBegin,
  "Page.javascriptDialogOpening": onJavascriptDialogOpening,
  "Target.attachedToTarget": onAttachedToTarget,
  "Runtime.bindingCalled": onBindingCalled,
  "Performance.metrics": onMetrics,
  [FRAME_EVENT]: onFrameHistogram,
} as const satisfies Handlers;

/** Hands `ev` to its handler; returns the records it completed. */
export function dispatch(s: TabState, ev: RawEvent): NavigationRecord[] {
  const h = (HANDLERS as Handlers)[ev.method] as Handler<RawEvent["method"]> | undefined;
  return h === undefined ? [] : h(s, ev);
}
