/**
 * The one type of everything the recorder consumes: a raw DevTools Protocol event as
 * chrome.debugger.onEvent (or any CDP client) delivers it. Types come from `devtools-protocol`.
 * `sessionId` is absent for the tab's own target and set for auto-attached children (OOPIFs).
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping";

type Events = ProtocolMapping.Events;

export type RawEvent = {
  [M in keyof Events]: { method: M; params: Events[M][0]; sessionId?: string };
}[keyof Events];

export type EventOf<M extends keyof Events> = Extract<RawEvent, { method: M }>;

export type CommandName = keyof ProtocolMapping.Commands;
export type CommandParams<C extends CommandName> = ProtocolMapping.Commands[C]["paramsType"][0];

/** A command the adapter (or the fixture recorder) sends; params typed by the protocol. */
export type Command = {
  [C in CommandName]: { method: C; params?: CommandParams<C> };
}[CommandName];
