/**
 * The worker core: every decision of the service worker, pure (STYLE.md rule zero).
 * `step(state, event, now)` -> `{state, effects}`; `now` is epoch ms. Each event goes to its
 * named handler: the tabs (on-tabs.ts: which tabs the debugger attaches to and when it lets go),
 * the host link (on-host.ts: its messages through the typed host handler map, the outbox's sends
 * and retries), records and settings (on-record.ts). The adapter (src/adapters/service-worker.ts)
 * runs the effects; tests/extension/worker-core.test.ts drives it with events.
 */
import type { Effect, WorkerEvent } from "./events.ts";
import { onHost, onHostDown, onRetry, onSendFailed } from "./on-host.ts";
import {
  onExperiment, onInstalled, onLabTimeout, onLetGo, onPause, onProxyApplied, onRecord, onSettings, onStart,
} from "./on-record.ts";
import {
  onAttachFailed, onAttached, onBeforeNavigate, onCommitted, onCreated, onDetached, onHistoryState, onLabTab, onPrerendered, onRemoved,
  onTabs,
} from "./on-tabs.ts";
import { Out } from "./out.ts";
import { expired } from "./pause.ts";
import type { WorkerState } from "./state.ts";

export { LAB_WAIT_MS, RETRY_MS } from "./on-host.ts";
export { initialState, paused, wanted, type WorkerState } from "./state.ts";

export interface Step { state: WorkerState; effects: Effect[] }

type Handlers = { readonly [T in WorkerEvent["type"]]: (o: Out, ev: Extract<WorkerEvent, { type: T }>) => void };

const HANDLERS = {
  start: onStart,
  settings: onSettings,
  experiment: onExperiment,
  pause: onPause,
  tick: () => undefined,
  let_go: onLetGo,
  installed: onInstalled,
  host: onHost,
  host_down: onHostDown,
  send_failed: onSendFailed,
  retry: onRetry,
  tabs: onTabs,
  before_navigate: onBeforeNavigate,
  created: onCreated,
  committed: onCommitted,
  prerendered: onPrerendered,
  history_state: onHistoryState,
  attached: onAttached,
  attach_failed: onAttachFailed,
  detached: onDetached,
  removed: onRemoved,
  record: onRecord,
  proxy_applied: onProxyApplied,
  lab_tab: onLabTab,
  lab_timeout: onLabTimeout,
} satisfies Handlers;

export function step(state: WorkerState, ev: WorkerEvent, now: number): Step {
  const o = new Out(state, now);
  if (expired(o.s.pause, now)) {
    o.s = { ...o.s, pause: null };
    o.emit({ type: "save_pause", pause: null });
    if (ev.type !== "start") o.pauseChanged();
  }
  (HANDLERS[ev.type] as (o: Out, ev: WorkerEvent) => void)(o, ev);
  return { state: o.s, effects: o.effects };
}
