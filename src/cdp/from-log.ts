/**
 * Replays a recorded raw CDP event log into NavigationRecords, exactly as the live adapter would
 * have produced them: before each event the recorder is polled at that event's own time, so
 * quiet periods and caps are judged in event time (CDP monotonic time only: event-clock.ts). The end of the log flushes what is open.
 */
import { monotonicTime } from "./event-clock.ts";
import { Recorder, type RecorderOptions } from "./recorder.ts";
import type { RawEvent } from "./raw-event.ts";
import type { NavigationRecord } from "../record/types.ts";

export function fromLog(events: Iterable<RawEvent>, options: RecorderOptions): NavigationRecord[] {
  const rec = new Recorder(options);
  const out: NavigationRecord[] = [];
  for (const ev of events) {
    const t = monotonicTime(ev);
    if (t !== null) out.push(...rec.poll(t));
    out.push(...rec.push(ev, typeof ev.at === "number" ? ev.at : null, typeof ev.wallOffset === "number" ? ev.wallOffset : null));
  }
  out.push(...rec.flush());
  return out;
}
