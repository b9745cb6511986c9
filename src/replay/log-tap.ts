/**
 * The log tap's core: cuts a tab's stream of raw events (every event its session fed the
 * recorder, src/cdp/session.ts TabSession's `log`) into one log per record, such that replaying a
 * record's log (src/replay/replay.ts, with the session's options) makes that record again. Pure.
 *
 * The cut follows the recorder's own state, given with each event (`active`: a navigation was
 * being recorded when it came) and with each batch of records (`busy`: the recorder already
 * records the next one):
 * - events that came while nothing was recorded are dropped, but for the one that started the
 *   navigation and the last screencast frame before it (the screen it started from,
 *   src/visual/metrics.ts): a replay that began with the previous document's leftovers could
 *   join them as a navigation of its own (src/cdp/late.ts);
 * - the last event before the records is the next navigation's when the recorder is busy (it
 *   replaced this one), and nobody's when it came after this one ended (a poll at its time
 *   completed it): either way it is not in this log.
 */
import { FRAME_EVENT, type RawEvent } from "../cdp/raw-event.ts";
import type { NavigationRecord } from "../record/types.ts";

interface Entry { ev: RawEvent; idle: boolean }

export interface TappedLog { record: NavigationRecord; events: RawEvent[] }

/** Logs larger than this many events are not kept (a page open for hours, a busy WebSocket). */
export const MAX_EVENTS = 200_000;

export class LogTap {
  private buf: Entry[] = [];
  private overflow = false;

  /** An event the session is about to feed its recorder; `active`: the recorder was recording a
   * navigation before it. */
  event(ev: RawEvent, active: boolean): void {
    if (this.buf.length >= MAX_EVENTS) {
      this.overflow = true;
      return;
    }
    this.buf.push({ ev, idle: !active });
  }

  /** The records the recorder just handed out, each with its log (none past MAX_EVENTS). */
  records(records: readonly NavigationRecord[], busy: boolean): TappedLog[] {
    if (records.length === 0) return [];
    const last = this.buf[this.buf.length - 1];
    const next = last !== undefined && (busy || last.idle) ? this.buf.pop() : undefined;
    const events = this.overflow ? null : trimLeading(this.buf);
    const frame = [...this.buf].reverse().find((e) => e.ev.method === FRAME_EVENT);
    this.buf = [];
    this.overflow = false;
    // the screen the next navigation starts from, then its first event
    if (frame !== undefined) this.buf.push({ ev: frame.ev, idle: true });
    if (next !== undefined && busy) this.buf.push(next);
    return events === null ? [] : records.map((record) => ({ record, events }));
  }
}

/** Of the events before the first one that came during the navigation: the last (it started the
 * navigation) and the last screencast frame before it. */
function trimLeading(buf: readonly Entry[]): RawEvent[] {
  const k = buf.findIndex((e) => !e.idle);
  const lead = k < 0 ? buf.length : k;
  if (lead <= 1) return buf.map((e) => e.ev);
  const before = buf.slice(0, lead - 1).filter((e) => e.ev.method === FRAME_EVENT).slice(-1);
  return [...before, ...buf.slice(lead - 1)].map((e) => e.ev);
}

/** A log as the host stores it: one JSON event per line (as tests/fixtures/cdp/*.jsonl). */
export function logText(events: readonly RawEvent[]): string {
  return events.map((e) => JSON.stringify(e)).join("\n") + "\n";
}
