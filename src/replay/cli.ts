/**
 * Adapter: the node entry `protolens replay` runs (built into dist/node/replay.cjs by webpack).
 * Reads one DevTools log (a file, or "-" for stdin; gzipped or not), replays it through the
 * recorder core and prints its records as a JSON array on stdout. A bad input is one line
 * `error: ...` on stderr and exit status 2.
 *
 *   node dist/node/replay.cjs [--options JSON] LOG
 * --options: the recorder's options as the log tap stored them (src/replay/replay.ts ReplayOptions).
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { LogError, parseLog } from "./log-file.ts";
import { parseReplayOptions, replay, type ReplayOptions } from "./replay.ts";

class UsageError extends Error {}

function args(argv: readonly string[]): { file: string; options: ReplayOptions } {
  let file: string | null = null;
  let options: ReplayOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a === "--options") {
      const raw = argv[++i];
      if (raw === undefined) throw new UsageError("--options needs a JSON object");
      try {
        options = parseReplayOptions(JSON.parse(raw));
      } catch (e) {
        throw new UsageError(`--options: ${e instanceof Error ? e.message : String(e)}`);
      }
    } else if (file === null && (a === "-" || !a.startsWith("-"))) file = a;
    else throw new UsageError(`unexpected argument ${a}`);
  }
  if (file === null) throw new UsageError("usage: replay.cjs [--options JSON] LOG");
  return { file, options };
}

function read(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file === "-" ? 0 : file);
  } catch (e) {
    throw new UsageError(`${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(e)}`);
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw new UsageError(`${file}: not a whole gzip file (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  return text;
}

function main(argv: readonly string[]): number {
  try {
    const { file, options } = args(argv);
    const text = read(file);
    let events;
    try {
      events = parseLog(text);
    } catch (e) {
      if (e instanceof LogError) throw new UsageError(`${file}: not a DevTools log: ${e.message}`);
      throw e;
    }
    process.stdout.write(JSON.stringify(replay(events, options)) + "\n");
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`error: ${e.message}\n`);
    return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
