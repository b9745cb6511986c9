/**
 * The durable outbox, pure: records wait here until the host acks them (docs/MESSAGES.md). The
 * adapter (src/adapters/outbox-store.ts) persists the state in chrome.storage.local after every
 * change, so it survives service-worker restarts.
 *
 * Bound: at most MAX_ITEMS records and MAX_BYTES of JSON; past either, the OLDEST records are
 * dropped and counted in `droppedFull`. Records the host rejects as invalid (`error` with
 * retry false) are dropped and counted in `droppedInvalid`. Both counters persist.
 */
import type { NavigationRecord } from "../record/types.ts";

export const MAX_ITEMS = 500;
export const MAX_BYTES = 8 * 1024 * 1024;

export interface Item {
  msgId: string;
  record: NavigationRecord;
  bytes: number;
  attempts: number;
}

export interface OutboxState {
  items: Item[];
  droppedFull: number;
  droppedInvalid: number;
  acked: number;
}

export const EMPTY_OUTBOX: OutboxState = { items: [], droppedFull: 0, droppedInvalid: 0, acked: 0 };

export interface Bounds { maxItems: number; maxBytes: number }
const BOUNDS: Bounds = { maxItems: MAX_ITEMS, maxBytes: MAX_BYTES };

export function enqueue(s: OutboxState, record: NavigationRecord, b: Bounds = BOUNDS): OutboxState {
  if (s.items.some((i) => i.msgId === record.id)) return s;
  const items = [...s.items, { msgId: record.id, record, bytes: JSON.stringify(record).length, attempts: 0 }];
  let bytes = items.reduce((n, i) => n + i.bytes, 0);
  let dropped = 0;
  while (items.length > 0 && (items.length > b.maxItems || bytes > b.maxBytes)) {
    const gone = items.shift();
    bytes -= gone?.bytes ?? 0;
    dropped += 1;
  }
  return { ...s, items, droppedFull: s.droppedFull + dropped };
}

/** The host stored it (or already had it): forget it. */
export function ack(s: OutboxState, msgId: string): OutboxState {
  if (!s.items.some((i) => i.msgId === msgId)) return s;
  return { ...s, items: s.items.filter((i) => i.msgId !== msgId), acked: s.acked + 1 };
}

/** The host answered `error`: drop the record only when resending cannot help. */
export function reject(s: OutboxState, msgId: string, retry: boolean): OutboxState {
  if (retry) {
    return { ...s, items: s.items.map((i) => (i.msgId === msgId ? { ...i, attempts: i.attempts + 1 } : i)) };
  }
  if (!s.items.some((i) => i.msgId === msgId)) return s;
  return { ...s, items: s.items.filter((i) => i.msgId !== msgId), droppedInvalid: s.droppedInvalid + 1 };
}

/** Stored JSON -> state; a malformed store starts empty (and says how many it could not read). */
export function parseOutbox(v: unknown): OutboxState {
  if (typeof v !== "object" || v === null) return EMPTY_OUTBOX;
  const o = v as Partial<Record<keyof OutboxState, unknown>>;
  const n = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0);
  const items = Array.isArray(o.items)
    ? o.items.filter((i): i is Item => typeof i === "object" && i !== null && typeof (i as Item).msgId === "string" && typeof (i as Item).record === "object")
    : [];
  const lost = Array.isArray(o.items) ? o.items.length - items.length : 0;
  return { items, droppedFull: n(o.droppedFull) + lost, droppedInvalid: n(o.droppedInvalid), acked: n(o.acked) };
}

/** Reconnect delay after `failures` consecutive failures: 1 s doubling to 10 s. Reconnecting
 * costs one process start, and a host that came back should not wait a minute for its records. */
export const MAX_BACKOFF_MS = 10_000;
export function backoffMs(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, Math.min(failures, 16)));
}
