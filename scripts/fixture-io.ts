/**
 * Reading fixtures and building goldens, shared by scripts/regen-goldens.ts and the unit tests:
 * the goldens are fromLog(fixture) with fixed, deterministic record ids and environment.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fromLog } from "../src/cdp/from-log.ts";
import type { RawEvent } from "../src/cdp/raw-event.ts";
import type { RecorderOptions } from "../src/cdp/recorder.ts";
import type { NavigationRecord } from "../src/record/types.ts";

export const FIXTURES = resolve(import.meta.dirname, "../tests/fixtures/cdp");

export function scenarios(): string[] {
  return readdirSync(FIXTURES).filter((f) => f.endsWith(".jsonl")).map((f) => f.slice(0, -6)).sort();
}

/** A scenario joined after its main document's request (late-*: the fixture recorder's; rw-late-*:
 * an everyday browser's, captured by the log tap): its log has no document request to begin with. */
export function isLate(name: string): boolean {
  return name.startsWith("late-") || name.startsWith("rw-late-");
}

export function readLog(name: string): RawEvent[] {
  return readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8")
    .split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as RawEvent);
}

export function fixedIds(): () => string {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
}

/** A fixture's <scenario>.meta.json (the caller says which of its fields it reads). */
export function readMeta(name: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.meta.json`), "utf8"));
}

/** The tab's main frame id as the adapter would know it (recorded since the late scenarios). */
function mainFrameId(name: string): { mainFrameId?: string } {
  const meta = readMeta(name) as { mainFrameId?: unknown };
  return typeof meta.mainFrameId === "string" ? { mainFrameId: meta.mainFrameId } : {};
}

/** The options every golden is made with. */
export function goldenOptions(name: string): RecorderOptions {
  return {
    ...mainFrameId(name),
    source: "lab",
    urlDetail: "full",
    // visual metrics wherever the log has frames (the `visual` scenario); null elsewhere
    visual: true,
    env: { browser: { name: "Chromium", version: "fixture" }, extension_version: "0.0.0", network: null },
    newId: fixedIds(),
  };
}

export function golden(name: string): NavigationRecord[] {
  return fromLog(readLog(name), goldenOptions(name));
}

export function goldenText(name: string): string {
  return JSON.stringify(golden(name), null, 2) + "\n";
}
