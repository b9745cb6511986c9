/**
 * Builds the public DevTools log corpus (tests/fixtures/public/sources.json; SOURCES.md says what
 * each log is) from the projects' own repositories: each log is read at its pinned commit, scrubbed
 * and gzipped. Scrubbing keeps the events a recorder can be fed (Network.*, Page.*, Target.*,
 * Performance.*, and the Runtime events that carry a time) in their original order and shape
 * (a JSON array; Lighthouse's `sessionId` and `targetType` kept), and removes what no test reads
 * and no one should redistribute twice: headers outside src/cdp/minify.ts KEPT_HEADERS (cookies,
 * tokens), cookie lists, initiator and stack traces, certificate details, POST bodies, console
 * arguments, WebSocket and EventSource payloads, data: URL payloads.
 *
 *   npx tsx scripts/public-logs.ts --repo lighthouse=GITDIR --repo chrome-har=GITDIR --out DIR
 * GITDIR is a git directory holding the project's pinned commit (a clone's .git, or a bare copy).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { KEPT_HEADERS } from "../src/cdp/minify.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Source { file: string; project: string; path: string; chrome: string; page: string }
interface Sources { projects: Record<string, { repo: string; commit: string }>; logs: Source[] }

export const SOURCES_JSON = resolve(import.meta.dirname, "../tests/fixtures/public/sources.json");

const KEPT_RUNTIME = new Set(["Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Runtime.bindingCalled"]);
const DROPPED_KEYS = new Set([
  "initiator", "securityDetails", "postData", "postDataEntries", "headersText", "requestHeadersText",
  "associatedCookies", "blockedCookies", "exemptedCookies", "cookiePartitionKey", "trustTokenParams",
  "stackTrace", "payloadData", "signedExchangeInfo",
]);

function keepEvent(method: string): boolean {
  return /^(Network|Page|Target|Performance)\./.test(method) || KEPT_RUNTIME.has(method);
}

function headers(h: Json): Json {
  if (h === null || typeof h !== "object" || Array.isArray(h)) return h;
  return Object.fromEntries(Object.entries(h).filter(([k]) => KEPT_HEADERS.has(k.toLowerCase())));
}

function scrub(v: Json, key = ""): Json {
  if (typeof v === "string" && key === "url") return v.replace(/^(data:[^,]*,).*/s, "$1FILLER");
  if (Array.isArray(v)) return v.map((x) => scrub(x));
  if (v === null || typeof v !== "object") return v;
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(v)) {
    if (DROPPED_KEYS.has(k)) continue;
    out[k] = k === "headers" || k === "requestHeaders" ? headers(x) : scrub(x, k);
  }
  return out;
}

/** One event, scrubbed; null when it is not kept. */
export function scrubEvent(ev: { [k: string]: Json }): { [k: string]: Json } | null {
  const method = ev.method;
  if (typeof method !== "string" || !keepEvent(method)) return null;
  const params = scrub(ev.params ?? {}) as { [k: string]: Json };
  if (method === "Runtime.consoleAPICalled") params.args = [];
  if (method === "Runtime.exceptionThrown" && typeof params.exceptionDetails === "object" && params.exceptionDetails !== null) {
    const d = params.exceptionDetails as { [k: string]: Json };
    params.exceptionDetails = { exceptionId: d.exceptionId ?? 0, text: "", lineNumber: d.lineNumber ?? 0, columnNumber: d.columnNumber ?? 0 };
  }
  if (method === "Network.eventSourceMessageReceived") params.data = "";
  const out: { [k: string]: Json } = { method, params };
  for (const k of ["sessionId", "targetType"]) if (ev[k] !== undefined) out[k] = ev[k] ?? null;
  return out;
}

function main(argv: string[]): void {
  const repos = new Map<string, string>();
  let outDir = "";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--repo") {
      const [name, dir] = (argv[++i] ?? "").split("=");
      if (name && dir) repos.set(name, dir);
    } else if (argv[i] === "--out") outDir = argv[++i] ?? "";
  }
  if (outDir === "") throw new Error("usage: public-logs.ts --repo NAME=GITDIR ... --out DIR");
  const sources = JSON.parse(readFileSync(SOURCES_JSON, "utf8")) as Sources;
  mkdirSync(outDir, { recursive: true });
  for (const log of sources.logs) {
    const project = sources.projects[log.project];
    const gitDir = repos.get(log.project);
    if (!project || !gitDir) throw new Error(`no --repo for ${log.project}`);
    let raw = execFileSync("git", ["--git-dir", gitDir, "show", `${project.commit}:${log.path}`], { maxBuffer: 1 << 28 });
    if (log.path.endsWith(".gz")) raw = gunzipSync(raw);
    const events = JSON.parse(raw.toString("utf8")) as { [k: string]: Json }[];
    const kept = events.map(scrubEvent).filter((e) => e !== null);
    const text = "[\n" + kept.map((e) => JSON.stringify(e)).join(",\n") + "\n]\n";
    const gz = gzipSync(text, { level: 9 });
    writeFileSync(join(outDir, log.file), gz);
    console.log(`${log.file}: ${events.length} -> ${kept.length} events, ${raw.length} -> ${gz.length} bytes`);
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) main(process.argv.slice(2));
