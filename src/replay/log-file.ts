/**
 * Reads a DevTools log's text into the recorder's RawEvents (src/cdp/raw-event.ts). Pure: the
 * caller reads (and gunzips) the file. Two layouts are read:
 * - one event per line (JSONL), as tests/fixtures/cdp/*.jsonl and the extension's log tap write;
 * - a JSON array of events, as Lighthouse's `*.devtoolslog.json` and chrome-har's perf logs.
 * Lighthouse's flattened-session logs put a `sessionId` on every event and mark the page's own
 * target with `targetType: "page"` (Lighthouse core/gather/driver/target-manager.js): those
 * events lose their sessionId, as chrome.debugger delivers the tab's own events without one;
 * events of other targets (OOPIFs, workers) keep theirs.
 */
import type { RawEvent } from "../cdp/raw-event.ts";

export class LogError extends Error {}

function event(value: unknown, where: string): RawEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new LogError(`${where} is not an event object`);
  const v = value as {
    method?: unknown; params?: unknown; sessionId?: unknown; targetType?: unknown; at?: unknown; wallOffset?: unknown;
  };
  if (typeof v.method !== "string" || v.method === "") throw new LogError(`${where} has no method`);
  const params = v.params ?? {};
  if (typeof params !== "object" || params === null || Array.isArray(params)) throw new LogError(`${where}: params is not an object`);
  const ev = { method: v.method, params } as RawEvent;
  if (typeof v.sessionId === "string" && v.sessionId !== "" && v.targetType !== "page") ev.sessionId = v.sessionId;
  // the adapter's CDP time of an event without its own (a tapped log, src/cdp/raw-event.ts)
  if (typeof v.at === "number" && Number.isFinite(v.at)) ev.at = v.at;
  if (typeof v.wallOffset === "number" && Number.isFinite(v.wallOffset)) ev.wallOffset = v.wallOffset;
  return ev;
}

function parse(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LogError(`${where} is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** The events of a log's text, in order; LogError names the first thing that is not an event. */
export function parseLog(text: string): RawEvent[] {
  const body = text.replace(/^\uFEFF/, "").trim();
  if (body === "") throw new LogError("the log is empty");
  if (body.startsWith("[")) {
    const all = parse(body, "the log");
    if (!Array.isArray(all)) throw new LogError("the log is not a JSON array of events");
    if (all.length === 0) throw new LogError("the log has no events");
    return all.map((v, i) => event(v, `event ${i + 1}`));
  }
  const events: RawEvent[] = [];
  body.split("\n").forEach((line, i) => {
    if (line.trim() !== "") events.push(event(parse(line, `line ${i + 1}`), `line ${i + 1}`));
  });
  return events;
}
