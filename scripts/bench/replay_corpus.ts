/**
 * Replay figures per log: requests sent before the load event (as the raw events tell it), how many
 * the recorder core's records hold, and how many of those agree with the log on protocol,
 * connection id and encoded bytes. The ground truth is the replay test's own reader
 * (tests/extension/raw-reader.ts), on purpose the same one, so the figures are the test's.
 * A count, not a timing: it needs no lock.
 *
 *   npx tsx scripts/bench/replay_corpus.ts [DIR ...]
 * DIR: directories of logs (*.json, *.jsonl, optionally .gz); by default our own fixtures
 * (tests/fixtures/cdp) and the public corpus (PROTOLENS_PUBLIC_LOGS, or shared/devtools-logs
 * found above this checkout).
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseLog } from "../../src/replay/log-file.ts";
import { replay } from "../../src/replay/replay.ts";
import { rawEvents, readTruth } from "../../tests/extension/raw-reader.ts";
import { check, tally, type Tally } from "../../tests/extension/replay-compare.ts";

const ROOT = resolve(import.meta.dirname, "../..");

function defaultDirs(): string[] {
  const dirs = [join(ROOT, "tests/fixtures/cdp")];
  const env = process.env.PROTOLENS_PUBLIC_LOGS;
  if (env) return [...dirs, env];
  for (let d = ROOT; d !== dirname(d); d = dirname(d)) {
    if (existsSync(join(d, "shared/devtools-logs"))) return [...dirs, join(d, "shared/devtools-logs")];
  }
  console.error("public corpus not found (PROTOLENS_PUBLIC_LOGS, shared/devtools-logs): own fixtures only");
  return dirs;
}

const pct = (n: number, d: number): string => (d === 0 ? "-" : `${((100 * n) / d).toFixed(1)}%`);
const row = (name: string, t: Tally): string =>
  [name.padEnd(46), String(t.before).padStart(6), String(t.recorded).padStart(8), pct(t.recorded, t.before).padStart(7),
    `${t.protocol}/${t.recorded}`.padStart(9), `${t.connection}/${t.recorded}`.padStart(9), `${t.bytes}/${t.bytesKnown}`.padStart(9)].join(" ");

const dirs = process.argv.length > 2 ? process.argv.slice(2) : defaultDirs();
const total: Tally = { before: 0, recorded: 0, protocol: 0, connection: 0, bytes: 0, bytesKnown: 0 };
console.log(["log".padEnd(46), "before".padStart(6), "recorded".padStart(8), "".padStart(7), "protocol".padStart(9),
  "conn".padStart(9), "bytes".padStart(9)].join(" "));
for (const dir of dirs) {
  for (const f of readdirSync(dir).filter((x) => /\.jsonl?(\.gz)?$/.test(x) && !x.includes(".expected.") && !x.includes(".meta.")).sort()) {
    const b = readFileSync(join(dir, f));
    const text = (b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b) : b).toString("utf8");
    const t = tally(check(readTruth(rawEvents(text)), replay(parseLog(text))));
    if (t.before === 0) continue; // no navigation with a load event seen from its request (late-*)
    for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
    console.log(row(f, t));
  }
}
console.log(row("total", total));
