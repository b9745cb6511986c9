/**
 * Every real fixture replayed with its untimed events delivered late. An event that carries no
 * time of its own (Page.frameNavigated, Page.navigatedWithinDocument, Target events...) is timed
 * by the extension's CDP clock at its delivery (session.ts logs it as `at`), and a busy service
 * worker delivers it after events that came later: with three lab browsers on two cores
 * (2026-11-29) /spa/'s route change was delivered after its fetch and image had ended, and its
 * record, which began at the delivery, had a negative first image; the host refused it
 * (milestones are never negative) and the route's requests were in no record. Here each such
 * event is delivered 10 ms after the latest of the next LOOKAHEAD timed events: every record must
 * keep its kind and requests, start no request before its zero and stay valid for the host.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { monotonicTime } from "../../src/cdp/event-clock.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { FIXTURES, golden, goldenOptions, readLog, scenarios } from "../../scripts/fixture-io.ts";

/** How many timed events an untimed one may be delivered behind: the soft route's fetch and image
 * took 7 (rw-soft); 10 is a margin, not a measurement. */
const LOOKAHEAD = 10;
const schema = JSON.parse(readFileSync(join(FIXTURES, "../../../schema/navigation-record.schema.json"), "utf8")) as object;
const valid = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function deliveredLate(log: readonly RawEvent[]): RawEvent[] {
  let last: number | null = null;
  return log.map((ev, i) => {
    const own = monotonicTime(ev);
    if (own !== null) {
      last = own;
      return ev;
    }
    const ahead = log.slice(i + 1).flatMap((e) => { const t = monotonicTime(e); return t === null ? [] : [t]; }).slice(0, LOOKAHEAD);
    const t = Math.max(...ahead, last ?? -Infinity, typeof ev.at === "number" ? ev.at : -Infinity);
    return Number.isFinite(t) ? { ...ev, at: t + 0.01 } : ev;
  });
}

const shape = (name: string, log: readonly RawEvent[]): string[] =>
  fromLog(log, goldenOptions(name)).map((r) => `${r.page.kind} ${r.page.url} ${r.requests.map((q) => q.url).sort().join(" ")}`);

describe.each(scenarios())("fixture %s, untimed events delivered late", (name) => {
  const log = readLog(name);
  const late = deliveredLate(log);

  it("delays some event (or has none untimed)", () => {
    const untimed = log.filter((ev) => monotonicTime(ev) === null).length;
    expect(late.filter((ev, i) => ev !== log[i]).length).toBe(untimed);
  });

  it("gives the same records, no request before its zero, each valid for the host", () => {
    expect(shape(name, late)).toEqual(shape(name, log));
    for (const r of fromLog(late, goldenOptions(name))) {
      expect(r.requests.filter((q) => q.start_ms < 0).map((q) => q.url), r.page.url).toEqual([]);
      expect(valid(r), JSON.stringify(valid.errors)).toBe(true);
    }
  });
});

/** Joined at the commit's replay (late.ts "commit"): Network.enable is the attach's first command
 * and the lifecycle events come on later (enable-commands.ts TAB_COMMANDS), so the committed
 * document's responses can come before the replayed commit that joins it. Until 2026-11-29 such a
 * response was dropped (found by swapping each adjacent Network / Page pair of every fixture: in
 * `late-commit`, base.css's response before the replay left the record 29 of its 30 requests). */
/** The log with the committed document's first subresource response moved before the replayed
 * commit, or null when it has none after it. */
function responseFirst(log: readonly RawEvent[]): RawEvent[] | null {
  const commit = log.findIndex((ev) => ev.sessionId === undefined && ev.method === "Page.lifecycleEvent" && ev.params.name === "commit");
  const reply = log.findIndex((ev, i) => i > commit && ev.sessionId === undefined && ev.method === "Network.responseReceived" &&
    ev.params.requestId !== ev.params.loaderId);
  if (commit < 0 || reply < 0) return null;
  return [...log.slice(0, commit), log[reply] as RawEvent, ...log.slice(commit, reply), ...log.slice(reply + 1)];
}

const joinedAtCommit = scenarios().filter((name) => golden(name)[0]?.page.late_attach === "commit");

describe.each(joinedAtCommit.filter((name) => responseFirst(readLog(name)) !== null))(
  "fixture %s, joined at the commit's replay, a response before it", (name) => {
    it("gives the same records", () => {
      const log = readLog(name);
      expect(shape(name, responseFirst(log) ?? [])).toEqual(shape(name, log));
    });
  });

it("some fixtures are joined at the commit's replay with a subresource response after it", () => {
  expect(joinedAtCommit.filter((name) => responseFirst(readLog(name)) !== null).length).toBeGreaterThanOrEqual(2);
});

/** Events of different pipes delivered in the other order: Chromium sends a page's Network and
 * Page events from different places (the browser process, the renderer), a child frame's from
 * another renderer, and chrome.debugger has delivered a fetch before the route change that made
 * it (tab-state.ts ORPHAN_WINDOW_S). Each adjacent pair of every fixture that is of two pipes (Network /
 * the rest, one session / another, two requests' Network events) is swapped, an untimed event of
 * the pair taking the other's time as the extension's clock would (`at`): the records
 * must stay the same (kinds, URLs, reasons, requests). 2026-11-29: 1,927 swaps; before 7e69627 one
 * changed a record (late-commit, above). */
describe.each(scenarios())("fixture %s, adjacent events of two pipes swapped", (name) => {
  const pipes = (a: RawEvent, b: RawEvent): boolean => {
    if (a.method.startsWith("ProtoLens") || b.method.startsWith("ProtoLens")) return false;
    if ((a.sessionId ?? "") !== (b.sessionId ?? "")) return true;
    const net = (ev: RawEvent): boolean => ev.method.startsWith("Network.");
    if (net(a) !== net(b)) return true;
    const id = (ev: RawEvent): unknown => (ev.params as { requestId?: string }).requestId;
    return net(a) && id(a) !== id(b);
  };

  it("gives the same records for every such swap", () => {
    const log = readLog(name);
    const base = shape(name, log);
    const changed: string[] = [];
    for (let i = 0; i + 1 < log.length; i++) {
      const a = log[i] as RawEvent, b = log[i + 1] as RawEvent;
      if (!pipes(a, b)) continue;
      // delivered next to the other, an untimed event is timed by the extension's clock there
      const timed = (ev: RawEvent, by: RawEvent): RawEvent => {
        const t = monotonicTime(by);
        return monotonicTime(ev) === null && t !== null && typeof ev.at !== "number" ? { ...ev, at: t } : ev;
      };
      const swapped = [...log.slice(0, i), timed(b, a), timed(a, b), ...log.slice(i + 2)];
      if (JSON.stringify(shape(name, swapped)) !== JSON.stringify(base)) changed.push(`${i}: ${a.method} <-> ${b.method}`);
    }
    expect(changed).toEqual([]);
  });
});
