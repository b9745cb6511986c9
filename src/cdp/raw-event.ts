/**
 * The one type of everything the recorder consumes: a raw DevTools Protocol event as
 * chrome.debugger.onEvent (or any CDP client) delivers it. Types come from `devtools-protocol`.
 * `sessionId` is absent for the tab's own target and set for auto-attached children (OOPIFs).
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping";

type Events = ProtocolMapping.Events;

/** What a tapped log (src/replay/log-tap.ts) adds to an event that carries no time of its own, so
 * a replay places it where the live recorder did: `at`, the CDP monotonic time (seconds) by the
 * adapter's clock when it came (src/cdp/clock.ts), and `wallOffset`, the recorder's epoch minus
 * monotonic seconds then (src/cdp/tab-state.ts). */
interface Tapped { at?: number; wallOffset?: number }

type CdpEvent = {
  [M in keyof Events]: { method: M; params: Events[M][0]; sessionId?: string } & Tapped;
}[keyof Events];

/** The one event the session core relays that CDP has no type for: a screencast frame
 * (Page.screencastFrame) as its colour histogram (src/visual/histogram.ts), decoded by the
 * adapter. `wallTime` is the frame's `metadata.timestamp` (epoch seconds, when it was shown);
 * it is not called `timestamp` because it is not CDP monotonic time (event-clock.ts). */
export const FRAME_EVENT = "ProtoLens.frameHistogram";
export interface FrameHistogramParams { wallTime: number; histogram: number[] }
export type FrameEvent = { method: typeof FRAME_EVENT; params: FrameHistogramParams; sessionId?: string } & Tapped;

/** The session core's mark in a tapped log (src/replay/log-tap.ts) that a poll of the adapter's
 * timer completed a record at `timestamp` (CDP monotonic seconds), with no event of the page at
 * that time: a replay polls there too (src/cdp/from-log.ts), so a record that ended on its own
 * clock (a long poll's silence, src/cdp/navigation.ts) ends the same in the replay. */
export const POLL_EVENT = "ProtoLens.poll";
export type PollEvent = { method: typeof POLL_EVENT; params: { timestamp: number }; sessionId?: string } & Tapped;

export type RawEvent = CdpEvent | FrameEvent | PollEvent;

export type EventOf<M extends keyof Events> = Extract<RawEvent, { method: M }>;

export type CommandName = keyof ProtocolMapping.Commands;
export type CommandParams<C extends CommandName> = ProtocolMapping.Commands[C]["paramsType"][0];

/** A command the adapter (or the fixture recorder) sends; params typed by the protocol. */
export type Command = {
  [C in CommandName]: { method: C; params?: CommandParams<C> };
}[CommandName];
