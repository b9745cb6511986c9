/**
 * Real sessions replayed through the recorder core (src/replay/replay.ts over src/cdp/from-log.ts)
 * and held against the raw events' own account (raw-reader.ts, no recorder code): per navigation
 * with a load event, every request sent before it is recorded, with the log's protocol,
 * connection id and encoded bytes. Two sets of logs:
 * - our own real-Chromium fixtures (tests/fixtures/cdp/*.jsonl), always here;
 * - public DevTools logs of real sites recorded by other projects (tests/fixtures/public/
 *   SOURCES.md), kept outside this repository: in the steering repository's
 *   shared/devtools-logs/ (found by walking up from this checkout), or where
 *   PROTOLENS_PUBLIC_LOGS points.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseLog } from "../../src/replay/log-file.ts";
import { replay } from "../../src/replay/replay.ts";
import { rawEvents, readTruth } from "./raw-reader.ts";
import { check, type NavCheck } from "./replay-compare.ts";
import { isLate } from "../../scripts/fixture-io.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const OWN = join(ROOT, "tests/fixtures/cdp");
const SOURCES = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/public/sources.json"), "utf8")) as { logs: { file: string }[] };

/** The public corpus's directory, or null when this machine has none. */
function publicDir(): string | null {
  const env = process.env.PROTOLENS_PUBLIC_LOGS;
  if (env) return env;
  for (let d = ROOT; d !== dirname(d); d = dirname(d)) {
    const c = join(d, "shared", "devtools-logs");
    if (existsSync(c)) return c;
  }
  return null;
}

function text(path: string): string {
  const b = readFileSync(path);
  return (b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b) : b).toString("utf8");
}

const describeLog = (name: string, path: string) => describe(name, () => {
  const t = text(path);
  const checks: NavCheck[] = check(readTruth(rawEvents(t)), replay(parseLog(t)));
  const hops = checks.flatMap((c) => c.hops);
  const show = (h: (typeof hops)[number]) => `${h.hop.id} ${h.hop.type} ${h.hop.url.slice(0, 100)}`;

  it("the log has a navigation with a load event and requests before it", () => {
    expect(checks.length).toBeGreaterThan(0);
    expect(hops.length).toBeGreaterThan(0);
  });

  it("each such navigation has a record", () => {
    expect(checks.filter((c) => c.record === null).map((c) => c.nav.url)).toEqual([]);
  });

  it("every request sent before the load event is recorded", () => {
    expect(hops.filter((h) => h.entry === null).map(show)).toEqual([]);
  });

  it("protocol, connection id and encoded bytes are the log's", () => {
    expect(hops.filter((h) => h.differ.length > 0).map((h) => `${show(h)}: ${h.differ.join(", ")}`)).toEqual([]);
  });
});

describe("own fixtures", () => {
  // the late scenarios (isLate) begin after the main document's request: the reader (by design) sees no
  // navigation there, so they are held to their goldens only (fixtures.test.ts)
  // and the real-web pages that never fire load by design (loading stopped, or never ending:
  // scripts/devkit/realweb.py) have no load event to count requests before
  const neverLoads = new Set(["rw-no-load.jsonl", "rw-user-stop.jsonl", "rw-window-stop.jsonl"]);
  const own = readdirSync(OWN).filter((f) => f.endsWith(".jsonl") && !isLate(f) && !neverLoads.has(f)).sort();
  it("are here", () => expect(own.length).toBeGreaterThan(5));
  for (const f of own) describeLog(f, join(OWN, f));
});

describe("SOURCES.md", () => {
  it("names every log of sources.json with its path and commit", () => {
    const md = readFileSync(join(ROOT, "tests/fixtures/public/SOURCES.md"), "utf8");
    const all = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/public/sources.json"), "utf8")) as
      { projects: Record<string, { commit: string }>; logs: { file: string; path: string; project: string }[] };
    const rows = md.split("\n").filter((l) => l.startsWith("| `"));
    expect(rows).toHaveLength(all.logs.length);
    for (const l of all.logs) {
      const row = rows.find((r) => r.includes(`\`${l.file}\``));
      expect(row).toContain(l.path);
      expect(row).toContain(all.projects[l.project]?.commit.slice(0, 12));
      expect(md).toContain(all.projects[l.project]?.commit);
    }
  });
});

const dir = publicDir();
// A stated skip: the corpus lives outside this repository (SOURCES.md says why and where)
describe.skipIf(dir === null)(`public logs (${dir ?? "not found: set PROTOLENS_PUBLIC_LOGS or add shared/devtools-logs"})`, () => {
  it("every log SOURCES lists is there", () => {
    expect(SOURCES.logs.filter((l) => !existsSync(join(dir ?? "", l.file))).map((l) => l.file)).toEqual([]);
  });
  for (const l of SOURCES.logs) if (dir !== null && existsSync(join(dir, l.file))) describeLog(l.file, join(dir, l.file));
});
