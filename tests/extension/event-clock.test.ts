/**
 * Every protocol event that carries a time is classified by the type of that time, from the
 * devtools-protocol package's own JSON (the source of its TypeScript types): a new event with a
 * wall-clock field that src/cdp/event-clock.ts does not classify fails here. And only monotonic
 * time moves the recorder's clock: a console message (epoch ms) in the middle of a load changes
 * nothing of its record.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { EVENT_CLOCKS, clockOf, monotonicTime, type Clock } from "../../src/cdp/event-clock.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import { FRAME_EVENT, POLL_EVENT, type RawEvent } from "../../src/cdp/raw-event.ts";
import { goldenOptions, readLog } from "../../scripts/fixture-io.ts";

interface Prop { name: string; $ref?: string; type?: string; items?: { $ref?: string } }
interface Domain {
  domain: string;
  types?: { id: string; type: string; properties?: Prop[] }[];
  events?: { name: string; parameters?: Prop[] }[];
}

const require = createRequire(import.meta.url);
const domains: Domain[] = ["browser_protocol.json", "js_protocol.json"].flatMap((f) =>
  (JSON.parse(readFileSync(require.resolve(`devtools-protocol/json/${f}`), "utf8")) as { domains: Domain[] }).domains);
const types = new Map<string, { properties?: Prop[] }>(domains.flatMap((d) => (d.types ?? []).map((t) => [`${d.domain}.${t.id}`, t] as const)));

/** The protocol's time types, by what they count. */
const TIME_TYPES: Record<string, Clock> = {
  "Network.MonotonicTime": "monotonic", "Network.TimeSinceEpoch": "epoch-s", "Input.TimeSinceEpoch": "epoch-s",
  "Runtime.Timestamp": "epoch-ms", "Media.Timestamp": "other",
};

/** [path, clock] of every time field, nested objects followed a few levels down. */
function timeFields(domain: string, props: readonly Prop[], depth = 0, path = ""): [string, Clock][] {
  const out: [string, Clock][] = [];
  for (const p of props) {
    const ref = p.$ref ?? (p.type === "array" ? p.items?.$ref : undefined);
    if (ref === undefined) {
      if (depth === 0 && p.name === "timestamp" && p.type === "number") out.push([path + p.name, "other"]);
      continue;
    }
    const full = ref.includes(".") ? ref : `${domain}.${ref}`;
    const clock = TIME_TYPES[full];
    const t = types.get(full);
    if (clock !== undefined) out.push([path + p.name, clock]);
    else if (t?.properties && depth < 4) out.push(...timeFields(full.split(".")[0] ?? domain, t.properties, depth + 1, `${path}${p.name}.`));
  }
  return out;
}

/** The class an event must have: monotonic when its top-level `timestamp` is monotonic time. */
function expected(fields: readonly [string, Clock][]): Clock | null {
  if (fields.length === 0) return null;
  if (fields.some(([path, c]) => path === "timestamp" && c === "monotonic")) return "monotonic";
  const top = fields.find(([path]) => path === "timestamp");
  if (top !== undefined) return top[1];
  const kinds = new Set(fields.map(([, c]) => c).filter((c) => c !== "monotonic"));
  return kinds.size === 1 ? [...kinds][0] ?? null : "other";
}

const events = domains.flatMap((d) => (d.events ?? []).map((e) => ({
  method: `${d.domain}.${e.name}`, fields: timeFields(d.domain, e.parameters ?? []),
})));

describe("every event's clock, from the protocol's types", () => {
  it("reads a protocol of over 200 events, some with each clock", () => {
    expect(events.length).toBeGreaterThan(200);
    const classes = new Set(events.map((e) => expected(e.fields)));
    expect(classes).toEqual(new Set([null, "monotonic", "epoch-s", "epoch-ms", "other"]));
  });

  it.each(events.filter((e) => e.fields.length > 0).map((e) => [e.method, e] as const))(
    "%s is classified by the type of its time", (_m, e) => {
      expect(clockOf(e.method), JSON.stringify(e.fields)).toBe(expected(e.fields));
    });

  it("classifies no event the protocol does not have, or has without a time", () => {
    const known = new Map(events.map((e) => [e.method, e.fields.length]));
    for (const m of Object.keys(EVENT_CLOCKS)) {
      if (m === FRAME_EVENT || m === POLL_EVENT) continue; // the session core's own (raw-event.ts)
      expect(known.get(m), m).toBeGreaterThan(0);
    }
  });

  it("the console and exceptions carry epoch milliseconds, not monotonic seconds", () => {
    expect(clockOf("Runtime.consoleAPICalled")).toBe("epoch-ms");
    expect(clockOf("Runtime.exceptionThrown")).toBe("epoch-ms");
    expect(clockOf("Network.requestWillBeSent")).toBe("monotonic");
    expect(clockOf(FRAME_EVENT)).toBe("epoch-s");
    expect(clockOf(POLL_EVENT)).toBe("monotonic");
  });
});

describe("monotonicTime", () => {
  it("reads the timestamp of monotonic events only", () => {
    const console: RawEvent = {
      method: "Runtime.consoleAPICalled",
      params: { type: "log", args: [], executionContextId: 1, timestamp: 1.7e12 },
    };
    expect(monotonicTime(console)).toBeNull();
    const load: RawEvent = { method: "Page.loadEventFired", params: { timestamp: 1234.5 } };
    expect(monotonicTime(load)).toBe(1234.5);
    const bad = { method: "Page.loadEventFired", params: { timestamp: Number.NaN } } as RawEvent;
    expect(monotonicTime(bad)).toBeNull();
  });
});

describe("wall-clock events in a load change nothing of its record", () => {
  /** The h2 fixture with console messages, an exception and a rejection woven in after every
   * fifth event, each stamped with the epoch milliseconds Chromium gives them. */
  function noisy(log: readonly RawEvent[]): RawEvent[] {
    const out: RawEvent[] = [];
    const epochMs = 1_763_812_345_678;
    log.forEach((ev, i) => {
      out.push(ev);
      if (i % 5 !== 2) return;
      out.push(i % 3 === 0
        ? { method: "Runtime.exceptionThrown", params: { timestamp: epochMs + i, exceptionDetails: {
          exceptionId: i, text: "Uncaught Error: boom", lineNumber: 1, columnNumber: 1 } } }
        : { method: "Runtime.consoleAPICalled", params: {
          type: i % 2 === 0 ? "log" : "warning", args: [], executionContextId: 1, timestamp: epochMs + i } });
    });
    return out;
  }

  it.each(["h1", "h2", "h3", "redirect", "late-commit"])("%s: the same record as its quiet twin", (name) => {
    const log = readLog(name);
    const quiet = fromLog(log, goldenOptions(name));
    const loud = fromLog(noisy(log), goldenOptions(name));
    expect(loud.length).toBe(quiet.length);
    expect(loud).toEqual(quiet);
    expect(quiet[0]?.milestones.load_ms).not.toBeNull();
  });
});
