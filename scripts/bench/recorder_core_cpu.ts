/**
 * The recorder's own CPU per load, replayed in Node from the recorded fixtures (tests/fixtures/cdp),
 * stage by stage as the service worker runs them:
 * - deliver: JSON.parse of each event (chrome.debugger hands the worker each event as a parsed
 *   object; its decode is the worker's share of delivering the stream; the browser's share is
 *   not here);
 * - events: the recorder's handlers (Recorder.push), per DevTools domain, timed event by event;
 * - build: the polls (Recorder.poll: the quiet check, then the record's building) and the flush;
 * - serialize: JSON.stringify of the records, twice (the outbox's chrome.storage.local write,
 *   src/adapters/outbox-store.ts) plus once (the native-messaging port), as Chromium serializes
 *   the message object;
 * - frame (visual metrics only, per screencast frame): the base64 JPEG to bytes as
 *   src/adapters/frame-decode.ts does it, then histogramOf (src/visual/histogram.ts) on one
 *   780 x 437 RGBA frame (the headless viewport). The JPEG decode itself is Chromium's and is not
 *   here.
 * Each figure is the median over R rounds of N replays, in ms of CPU (process.cpuUsage) or of
 * process.hrtime for the per-event split. The fixtures are minified (src/cdp/minify.ts): a live
 * stream carries more events (ExtraInfo, initiator stacks) that cost delivery, not handling.
 *
 *   npx tsx scripts/bench/recorder_core_cpu.ts [--rounds 7] [--reps 200]
 */
import { monotonicTime } from "../../src/cdp/event-clock.ts";
import { Recorder } from "../../src/cdp/recorder.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { histogramOf } from "../../src/visual/histogram.ts";
import { base64Bytes } from "../../src/adapters/frame-decode.ts";
import { goldenOptions, readLog, scenarios } from "../fixture-io.ts";

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg("--rounds", 7);
const REPS = arg("--reps", 200);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** CPU ms per call of `fn`: the median of ROUNDS rounds of `reps` calls. */
function cpuMs(fn: () => void, reps = REPS): number {
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < reps; i++) fn();
    const d = process.cpuUsage(t);
    samples.push((d.user + d.system) / 1000 / reps);
  }
  return median(samples);
}

const domainOf = (e: RawEvent): string => e.method.split(".")[0] ?? "";
const nowNs = (): bigint => process.hrtime.bigint();

/** One replay as fromLog does it, with the time of each push added to its domain and the time
 * of the polls and the flush to `build`. */
function replayTimed(log: RawEvent[], name: string, acc: Map<string, number>): void {
  const rec = new Recorder(goldenOptions(name));
  let build = 0n;
  for (const ev of log) {
    const t = monotonicTime(ev);
    if (t !== null) {
      const a = nowNs();
      rec.poll(t);
      build += nowNs() - a;
    }
    const a = nowNs();
    rec.push(ev);
    const d = domainOf(ev);
    acc.set(d, (acc.get(d) ?? 0) + Number(nowNs() - a) / 1e6);
  }
  const a = nowNs();
  rec.flush();
  acc.set("build", (acc.get("build") ?? 0) + Number(build + nowNs() - a) / 1e6);
}

function splitMs(log: RawEvent[], name: string): Map<string, number> {
  const rounds: Map<string, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const acc = new Map<string, number>();
    for (let i = 0; i < REPS; i++) replayTimed(log, name, acc);
    rounds.push(acc);
  }
  const keys = [...new Set(rounds.flatMap((m) => [...m.keys()]))].sort();
  return new Map(keys.map((k) => [k, median(rounds.map((m) => (m.get(k) ?? 0) / REPS))]));
}

console.log("fixture | events | requests | deliver | events (per domain: events ms) | build | serialize | whole ms");
for (const name of scenarios()) {
  const log = readLog(name);
  const lines = log.map((e) => JSON.stringify(e));
  const deliver = cpuMs(() => { for (const l of lines) JSON.parse(l); });
  const split = splitMs(log, name);
  const records = (() => { const rec = new Recorder(goldenOptions(name)); const out = [];
    for (const ev of log) { const t = monotonicTime(ev); if (t !== null) out.push(...rec.poll(t)); out.push(...rec.push(ev)); }
    return [...out, ...rec.flush()]; })();
  const serialize = cpuMs(() => { for (let k = 0; k < 3; k++) JSON.stringify(records); });
  const counts = new Map<string, number>();
  for (const e of log) counts.set(domainOf(e), (counts.get(domainOf(e)) ?? 0) + 1);
  const events = [...counts.keys()].sort().reduce((n, d) => n + (split.get(d) ?? 0), 0);
  const build = split.get("build") ?? 0;
  const perDomain = [...counts.keys()].sort().map((d) => `${d} ${counts.get(d)}: ${(split.get(d) ?? 0).toFixed(3)}`).join(", ");
  const requests = records.reduce((n, r) => n + r.requests.length, 0);
  console.log([name, log.length, requests, deliver.toFixed(3), `${events.toFixed(3)} (${perDomain})`, build.toFixed(3),
    serialize.toFixed(3), (deliver + events + build + serialize).toFixed(3)].join(" | "));
}

// one screencast frame: 780 x 437 RGBA, a page-like mix of white and colour; its JPEG's base64 at
// the size Chromium's q80 frames of the test pages have (about 40 kB)
const W = 780, H = 437;
const rgba = new Uint8ClampedArray(W * H * 4);
for (let i = 0; i < rgba.length; i += 4) {
  const p = i / 4, x = p % W, y = Math.floor(p / W);
  const white = (y % 60) > 30 || x > 600;
  rgba[i] = white ? 255 : (x * 7) & 255; rgba[i + 1] = white ? 255 : (y * 3) & 255; rgba[i + 2] = white ? 255 : 128; rgba[i + 3] = 255;
}
const jpeg = Buffer.from(Uint8Array.from({ length: 40_000 }, (_, i) => (i * 2654435761) >>> 24)).toString("base64");
const legacy = cpuMs(() => Uint8Array.from(atob(jpeg), (c) => c.charCodeAt(0)), 50);
const bytes = cpuMs(() => base64Bytes(jpeg), 50);
const hist = cpuMs(() => histogramOf(rgba), 20);
console.log(`frame (visual metrics, per screencast frame): base64 -> bytes ${legacy.toFixed(3)} ms as Uint8Array.from(atob, fn), ` +
  `${bytes.toFixed(3)} ms as base64Bytes; histogramOf ${hist.toFixed(3)} ms (the JPEG decode and getImageData are Chromium's, not here)`);
