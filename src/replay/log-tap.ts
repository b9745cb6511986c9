/**
 * The log tap's core: cuts a tab's stream of raw events (every event its session fed the
 * recorder, src/cdp/session.ts TabSession's `log`) into one log per record, such that replaying a
 * record's log (src/replay/replay.ts, with the session's options) makes that record again. Pure.
 *
 * A navigation's log begins at its document request (the record's main document names it) and
 * ends with the event that completed it; before it only the last screencast frame is kept (the
 * screen it started from, src/visual/metrics.ts). Logs may overlap: a navigation under way while
 * a page is shown waits as pending until its commit (src/cdp/tab-state.ts), so the shown page's
 * last events are in the next one's log too, where a replay (which has no page shown) passes
 * them by. The recorder's state comes with each event (`active`: a navigation was being recorded
 * or waited when it came) and with each batch of records (`busy`: the next one is under way):
 * - the last event before the records is the next navigation's when the recorder is busy (it
 *   committed, or replaced this one), and nobody's when it came after this one ended (a poll at
 *   its time completed it): either way it is not in this log;
 * - a navigation joined late (src/cdp/late.ts) has no document request in the log: its log
 *   begins with the last event that came while nothing was recorded, the one that joined it.
 */
import { FRAME_EVENT, type RawEvent } from "../cdp/raw-event.ts";
import type { NavigationRecord } from "../record/types.ts";

interface Entry { ev: RawEvent; idle: boolean }

/** `joined`: the log begins after the tab's document was recorded (a same-document navigation's
 * or a restore's): replay it with ReplayOptions.joined. */
export interface TappedLog { record: NavigationRecord; events: RawEvent[]; joined?: boolean }

/** Logs larger than this many events are not kept (a page open for hours, a busy WebSocket). */
export const MAX_EVENTS = 200_000;

const isFrame = (e: Entry): boolean => e.ev.method === FRAME_EVENT;

/** A top-level document request's first hop in the tab's own session: where a navigation starts. */
function docRequest(e: Entry, mainFrameId: string | undefined): string | null {
  const ev = e.ev;
  if (ev.method !== "Network.requestWillBeSent" || ev.sessionId !== undefined || ev.params.type !== "Document" ||
      ev.params.redirectResponse !== undefined) return null;
  return mainFrameId === undefined || ev.params.frameId === mainFrameId ? ev.params.requestId : null;
}

/** A same-document navigation or a restore: no document request starts it, and it may take
 * requests that came just before its own event (src/cdp/tab-state.ts ORPHAN_WINDOW_S), so
 * its log is every event since the record before it. */
const withoutDocument = (r: NavigationRecord): boolean => r.page?.kind === "soft" || r.page?.kind === "bfcache";

/** A record made from webNavigation alone (src/cdp/missed.ts: a page left before the attach, a
 * prerender's activation): no event of the log made it, so no replay would, and it gets no log. */
const withoutEvents = (r: NavigationRecord): boolean => r.page?.late_attach === "missed" || r.page?.kind === "prerender";

/** The CDP requestId of a record's main document (request_id is `requestId:hop`). */
const mainDoc = (r: NavigationRecord): string | undefined =>
  r.requests.find((q) => q.is_main_document)?.request_id.replace(/:\d+$/, "");
/** The frame of a record's main document: the tab's main frame. */
const mainFrame = (r: NavigationRecord): string | undefined => r.requests.find((q) => q.is_main_document)?.frame_id ?? undefined;

export class LogTap {
  private buf: Entry[] = [];
  private overflow = false;

  /** `mainFrameId`: the tab's main frame, when the adapter knows it (a same-process iframe's
   * document request is then never taken for a navigation's start). */
  constructor(private readonly mainFrameId?: string) {}

  /** An event the session is about to feed its recorder; `active`: the recorder was recording a
   * navigation before it. */
  event(ev: RawEvent, active: boolean): void {
    if (this.buf.length >= MAX_EVENTS) {
      this.overflow = true;
      return;
    }
    this.buf.push({ ev, idle: !active });
  }

  /** The records the recorder just handed out, each with its log (none past MAX_EVENTS; none for
   * a record made from webNavigation alone). */
  records(all: readonly NavigationRecord[], busy: boolean): TappedLog[] {
    const records = all.filter((r) => !withoutEvents(r));
    if (records.length === 0) return [];
    const last = this.buf[this.buf.length - 1];
    const next = last !== undefined && (busy || last.idle) ? this.buf.pop() : undefined;
    const buf = this.buf;
    const logs = this.overflow ? [] : records.map((record): TappedLog => withoutDocument(record)
      ? { record, events: buf.map((e) => e.ev), joined: true }
      : { record, events: this.cut(buf, record) });
    // what the next navigation may need: from its document request on, if it began already
    const done = new Set(records.map(mainDoc));
    let from = buf.length;
    if (busy) {
      for (let i = buf.length - 1; i >= 0; i--) {
        const doc = docRequest(buf[i] as Entry, this.mainFrameId ?? records.map(mainFrame).find((f) => f !== undefined));
        if (doc !== null && !done.has(doc)) {
          from = i;
          break;
        }
      }
    }
    const frame = buf.slice(0, from).reverse().find(isFrame);
    this.buf = [...(frame === undefined ? [] : [{ ev: frame.ev, idle: true }]), ...buf.slice(from),
      ...(next !== undefined && busy ? [next] : [])];
    this.overflow = false;
    return logs;
  }

  /** One record's events: from its document request on, or (joined late) as trimLeading says. */
  private cut(buf: readonly Entry[], record: NavigationRecord): RawEvent[] {
    const doc = mainDoc(record);
    const frameId = this.mainFrameId ?? mainFrame(record);
    const at = doc === undefined ? -1 : buf.findIndex((e) => docRequest(e, frameId) === doc);
    if (at < 0) return trimLeading(buf);
    const frame = buf.slice(0, at).reverse().find(isFrame);
    return [...(frame === undefined ? [] : [frame.ev]), ...withoutLater(buf.slice(at), doc, frameId)];
  }
}

/** A navigation's events less those of the navigations that began after it, pending while it was
 * shown (their document's loader's requests and page events): a replay would record them too. */
function withoutLater(events: readonly Entry[], doc: string | undefined, mainFrameId: string | undefined): RawEvent[] {
  const loaders = new Set<string>();
  for (const e of events) {
    const d = docRequest(e, mainFrameId);
    if (d !== null && d !== doc && e.ev.method === "Network.requestWillBeSent") loaders.add(e.ev.params.loaderId);
  }
  if (loaders.size === 0) return events.map((e) => e.ev);
  const requests = new Set<string>();
  const out: RawEvent[] = [];
  for (const { ev } of events) {
    const p = ev.params as { loaderId?: unknown; requestId?: unknown; frame?: { loaderId?: unknown } };
    const root = ev.sessionId === undefined;
    if (root && ev.method === "Network.requestWillBeSent" && loaders.has(ev.params.loaderId)) requests.add(ev.params.requestId);
    const theirs = root && ((typeof p.requestId === "string" && requests.has(p.requestId)) ||
      (typeof p.loaderId === "string" && loaders.has(p.loaderId)) ||
      (typeof p.frame?.loaderId === "string" && loaders.has(p.frame.loaderId)));
    if (!theirs) out.push(ev);
  }
  return out;
}

/** A navigation joined late: of the events before the first one that came while it was recorded,
 * the last (it joined the navigation) and the last screencast frame before it. */
function trimLeading(buf: readonly Entry[]): RawEvent[] {
  const k = buf.findIndex((e) => !e.idle);
  const lead = k < 0 ? buf.length : k;
  if (lead <= 1) return buf.map((e) => e.ev);
  const before = buf.slice(0, lead - 1).filter(isFrame).slice(-1);
  return [...before, ...buf.slice(lead - 1)].map((e) => e.ev);
}

/** A log as the host stores it: one JSON event per line (as tests/fixtures/cdp/*.jsonl). */
export function logText(events: readonly RawEvent[]): string {
  return events.map((e) => JSON.stringify(e)).join("\n") + "\n";
}
