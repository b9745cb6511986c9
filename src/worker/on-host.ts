/**
 * Worker core handlers for the host link: its messages, dispatched through the typed host
 * handler map (src/messages/protocol.ts dispatchHost), its going down, and the outbox's sends
 * and retries. Pure.
 */
import { ack, reject } from "../outbox/outbox.ts";
import { dispatchHost, type HostHandlers } from "../messages/protocol.ts";
import type { WorkerEvent } from "./events.ts";
import type { Out } from "./out.ts";
import { without } from "./state.ts";

type Ev<T extends WorkerEvent["type"]> = Extract<WorkerEvent, { type: T }>;

/** A retryable host error: the record is sent again after this long. */
export const RETRY_MS = 2000;
/** The lab's first URL waits this long at most for the host's policies (a host that sends none). */
export const LAB_WAIT_MS = 2000;

export const HOST_HANDLERS = {
  hello: (m, o) => {
    o.s = { ...o.s, lab: m.lab, hostReady: true, askedRelay: false };
    o.emit({ type: "save_host", lab: m.lab, hostVersion: m.host_version });
    o.flush();
    o.openWelcomeOnce(m.lab !== null);
    if (m.lab?.record && o.s.labStart === "none") {
      // the host's policies message follows its hello: the first lab URL waits for the PAC
      // and the throttling rules, at most LAB_WAIT_MS
      o.s = { ...o.s, labStart: "waiting" };
      o.emit({ type: "timer", ms: LAB_WAIT_MS, event: { type: "lab_timeout" } });
    }
  },
  ack: (m, o) => {
    o.s = { ...o.s, inflight: without(o.s.inflight, m.msg_id), outbox: ack(o.s.outbox, m.msg_id) };
    o.emit({ type: "save_outbox", outbox: o.s.outbox }, { type: "lab_ack", id: m.id });
  },
  policies: (m, o) => {
    o.s = { ...o.s, policies: { rules: m.rules, relay: m.relay }, askedRelay: m.relay !== null ? false : o.s.askedRelay };
    o.requestApply({ sync: false, lab: true });
  },
  error: (m, o) => {
    if (m.msg_id === null) return;
    o.s = { ...o.s, outbox: reject(o.s.outbox, m.msg_id, m.retry) };
    o.emit({ type: "save_outbox", outbox: o.s.outbox });
    if (m.retry) o.emit({ type: "timer", ms: RETRY_MS, event: { type: "retry", msgId: m.msg_id } });
    else o.s = { ...o.s, inflight: without(o.s.inflight, m.msg_id) };
  },
  pong: () => undefined,
  lab_go: (m, o) => {
    o.emit({ type: "lab_go", startAtMs: m.start_at_ms });
  },
  // the host's answer to the lab runner's lab_loaded (sent by the adapter, outside the outbox)
  lab_loaded: () => undefined,
  // only the dashboard's own port sends queries, only the options page and popup ask for the
  // contribution status (their own ports)
  query_result: () => undefined,
  contribute_status: () => undefined,
  // the log tap's logs are the adapter's (src/adapters/log-sender.ts), outside the outbox
  log_stored: () => undefined,
} satisfies HostHandlers<Out, void>;

export function onHost(o: Out, ev: Ev<"host">): void {
  dispatchHost(HOST_HANDLERS, ev.msg, o);
}

export function onHostDown(o: Out): void {
  o.s = { ...o.s, hostReady: false, inflight: new Set() };
  // no host (not installed yet): the first-run page says how to install it
  o.openWelcomeOnce(false);
}

export function onSendFailed(o: Out, ev: Ev<"send_failed">): void {
  o.s = { ...o.s, inflight: without(o.s.inflight, ev.msgId) };
}

export function onRetry(o: Out, ev: Ev<"retry">): void {
  o.s = { ...o.s, inflight: without(o.s.inflight, ev.msgId) };
  o.flush();
}
