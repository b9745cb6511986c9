/**
 * The one place that decides which clock an event carries. Three clocks reach a DevTools client
 * (devtools-protocol types): `Network.MonotonicTime` (seconds on the browser's monotonic clock:
 * the `timestamp` of Network and Page events), `Network.TimeSinceEpoch` (epoch seconds: `wallTime`,
 * a screencast frame's `metadata.timestamp`) and `Runtime.Timestamp` (epoch milliseconds: the
 * `timestamp` of Runtime.consoleAPICalled and Runtime.exceptionThrown). A field named `timestamp`
 * is not always monotonic time: a page's first console.log once moved the recorder's clock about
 * 1.7e12 s ahead and ended its record there (docs/ARCHITECTURE.md, "Chromium facts").
 *
 * Only monotonic time drives the recorder's clock, its quiet periods and its milestones; every
 * other event is used for its content only. EVENT_CLOCKS classifies every protocol event that
 * carries a time, by the type of its time fields; tests/extension/event-clock.test.ts derives the
 * same classes from the protocol's JSON and fails when an event with a time field is missing here.
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping";
import { FRAME_EVENT, POLL_EVENT, type RawEvent } from "./raw-event.ts";

/**
 * - `monotonic`: `params.timestamp` is Network.MonotonicTime (it may carry wall times as well,
 *   such as requestWillBeSent's `wallTime`);
 * - `epoch-s` / `epoch-ms`: its times are Network.TimeSinceEpoch / Runtime.Timestamp only, at
 *   the top level or nested;
 * - `other`: a time on a clock of its own (a profiler's, a media player's).
 */
export type Clock = "monotonic" | "epoch-s" | "epoch-ms" | "other";

type EventName = keyof ProtocolMapping.Events | typeof FRAME_EVENT | typeof POLL_EVENT;

export const EVENT_CLOCKS = {
  "Network.dataReceived": "monotonic",
  "Network.eventSourceMessageReceived": "monotonic",
  "Network.loadingFailed": "monotonic",
  "Network.loadingFinished": "monotonic",
  "Network.requestWillBeSent": "monotonic",
  "Network.resourceChangedPriority": "monotonic",
  "Network.responseReceived": "monotonic",
  "Network.webSocketClosed": "monotonic",
  "Network.webSocketFrameError": "monotonic",
  "Network.webSocketFrameReceived": "monotonic",
  "Network.webSocketFrameSent": "monotonic",
  "Network.webSocketHandshakeResponseReceived": "monotonic",
  "Network.webSocketWillSendHandshakeRequest": "monotonic",
  "Network.webTransportCreated": "monotonic",
  "Network.webTransportConnectionEstablished": "monotonic",
  "Network.webTransportClosed": "monotonic",
  "Network.directTCPSocketCreated": "monotonic",
  "Network.directTCPSocketOpened": "monotonic",
  "Network.directTCPSocketAborted": "monotonic",
  "Network.directTCPSocketClosed": "monotonic",
  "Network.directTCPSocketChunkSent": "monotonic",
  "Network.directTCPSocketChunkReceived": "monotonic",
  "Network.directUDPSocketCreated": "monotonic",
  "Network.directUDPSocketOpened": "monotonic",
  "Network.directUDPSocketAborted": "monotonic",
  "Network.directUDPSocketClosed": "monotonic",
  "Network.directUDPSocketChunkSent": "monotonic",
  "Network.directUDPSocketChunkReceived": "monotonic",
  "Page.domContentEventFired": "monotonic",
  "Page.lifecycleEvent": "monotonic",
  "Page.loadEventFired": "monotonic",
  // the session core's mark of a timer poll that completed a record (raw-event.ts)
  [POLL_EVENT]: "monotonic",

  "BackgroundService.backgroundServiceEventReceived": "epoch-s",
  "Network.signedExchangeReceived": "epoch-s",
  "Network.reportingApiReportAdded": "epoch-s",
  "Network.reportingApiReportUpdated": "epoch-s",
  "Network.deviceBoundSessionsAdded": "epoch-s",
  "Network.deviceBoundSessionEventOccurred": "epoch-s",
  // metadata.timestamp (epoch s) and metadata.monotonicTimestamp: no top-level timestamp
  "Page.screencastFrame": "epoch-s",
  "PerformanceTimeline.timelineEventAdded": "epoch-s",
  "Security.visibleSecurityStateChanged": "epoch-s",
  "Storage.storageBucketCreatedOrUpdated": "epoch-s",
  // the session core's relayed screencast frame (raw-event.ts): its `wallTime` is epoch seconds
  [FRAME_EVENT]: "epoch-s",

  "Log.entryAdded": "epoch-ms",
  "Runtime.consoleAPICalled": "epoch-ms",
  "Runtime.exceptionThrown": "epoch-ms",

  "HeapProfiler.lastSeenObjectId": "other",
  "Media.playerEventsAdded": "other",
  "Profiler.preciseCoverageDeltaUpdate": "other",
} as const satisfies { readonly [M in EventName]?: Clock };

/** The clock of an event's time fields; null: it carries no time. */
export function clockOf(method: string): Clock | null {
  return (EVENT_CLOCKS as Readonly<Record<string, Clock>>)[method] ?? null;
}

/** The event's CDP monotonic time in seconds, or null when it carries none. The only reader of
 * event time for the recorder's clock (its polls, the adapter's CdpClock, fromLog). */
export function monotonicTime(ev: RawEvent): number | null {
  if (clockOf(ev.method) !== "monotonic") return null;
  const p: unknown = ev.params;
  if (typeof p !== "object" || p === null || !("timestamp" in p)) return null;
  return typeof p.timestamp === "number" && Number.isFinite(p.timestamp) ? p.timestamp : null;
}
