/**
 * A log's records as the recorder core makes them (src/cdp/from-log.ts fromLog), with the options
 * a live session had when the log tap stored the log, or neutral ones for any other log: source
 * "lab", full URLs, visual metrics wherever the log has frames, record ids numbered from 1.
 */
import { fromLog } from "../cdp/from-log.ts";
import type { RawEvent } from "../cdp/raw-event.ts";
import type { NavigationRecord, Source, UrlDetail } from "../record/types.ts";
import { SOURCES, URL_DETAILS } from "../record/types.ts";
import type { RecordEnv } from "../cdp/build-record.ts";

/** What a live session's recorder was given (docs/MESSAGES.md `log`): all optional. */
export interface ReplayOptions {
  source?: Source;
  url_detail?: UrlDetail;
  visual?: boolean;
  quiet_ms?: number | null;
  main_frame_id?: string | null;
  env?: RecordEnv;
  /** The stored record's id, given to the first record (a log of one navigation has one). */
  id?: string;
  /** The log begins after the tab's document was recorded (a same-document navigation's or a
   * restore's log): RecorderOptions.joined. */
  joined?: boolean;
}

const NEUTRAL_ENV: RecordEnv = { browser: { name: "Chromium", version: "replay" }, extension_version: "replay", network: null };

/** Deterministic ids: `first` (when given), then 00000000-0000-4000-8000-00000000000n. */
function ids(first: string | undefined): () => string {
  let n = 0;
  return () => (++n === 1 && first !== undefined ? first : `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`);
}

export function replay(events: readonly RawEvent[], o: ReplayOptions = {}): NavigationRecord[] {
  return fromLog(events, {
    source: o.source ?? "lab",
    urlDetail: o.url_detail ?? "full",
    visual: o.visual ?? true,
    env: o.env ?? NEUTRAL_ENV,
    newId: ids(o.id),
    ...(typeof o.main_frame_id === "string" ? { mainFrameId: o.main_frame_id } : {}),
    ...(typeof o.quiet_ms === "number" ? { limits: { quietMs: o.quiet_ms } } : {}),
    ...(o.joined === true ? { joined: true } : {}),
  });
}

/** ReplayOptions from untrusted JSON (the CLI's --options): unknown or ill-typed fields are an error. */
export function parseReplayOptions(value: unknown): ReplayOptions {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("options are not an object");
  const v = value as Record<string, unknown>;
  const out: ReplayOptions = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined) continue;
    if (k === "source" && (SOURCES as readonly unknown[]).includes(x)) out.source = x as Source;
    else if (k === "url_detail" && (URL_DETAILS as readonly unknown[]).includes(x)) out.url_detail = x as UrlDetail;
    else if (k === "visual" && typeof x === "boolean") out.visual = x;
    else if (k === "joined" && typeof x === "boolean") out.joined = x;
    else if (k === "quiet_ms" && typeof x === "number" && Number.isFinite(x) && x > 0) out.quiet_ms = x;
    else if ((k === "main_frame_id" || k === "id") && typeof x === "string" && x !== "") out[k] = x;
    else if (k === "env" && isEnv(x)) out.env = x;
    else throw new Error(`option ${k}: ${JSON.stringify(x)} is not allowed`);
  }
  return out;
}

function isEnv(x: unknown): x is RecordEnv {
  if (typeof x !== "object" || x === null) return false;
  const e = x as Record<string, unknown>;
  const b = e.browser as Record<string, unknown> | undefined;
  return typeof b === "object" && b !== null && typeof b.name === "string" && typeof b.version === "string" &&
    typeof e.extension_version === "string" && (e.network === null || (typeof e.network === "object" && !Array.isArray(e.network)));
}
