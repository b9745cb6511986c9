/**
 * Native messaging between extension and host (docs/MESSAGES.md): one discriminated union per
 * direction, keyed on `type`, with the schema version. Everything the host sends is validated
 * here, where it enters the extension (parseHostMessage); nothing else trusts its shape.
 */
import { DEFAULT_LIMITS } from "../cdp/navigation.ts";
import { isUrlDetail } from "../record/url-detail.ts";
import { PolicyMessageError, parsePolicySet, type PolicyRule, type RelayInfo } from "./policies.ts";
import type { NavigationRecord, UrlDetail } from "../record/types.ts";
import type { ReplayOptions } from "../replay/replay.ts";
import { ContributeStatusError, parseContributeStatus, type ContributeStatus } from "../contribute/status.ts";

export const MSG_SCHEMA = 1 as const;

export interface LabConfig {
  record: boolean;
  url_detail: UrlDetail;
  context: Record<string, unknown>;
  navigate: string[];
  /** When the lab runner opens the next URL: after the previous record's ack, or once it is queued. */
  advance: LabAdvance;
  /** The network quiet after load that ends each record of this lab browser (src/cdp/navigation.ts
   * Limits.quietMs); null: the recorder's default. */
  quiet_ms: number | null;
  /** Capture paint progress for the visual metrics (optional in the message, default false). */
  visual: boolean;
  /** The log tap: send each record's raw DevTools events after it (optional, default false). */
  save_log: boolean;
  /** Open the first URL no earlier than this wall-clock time (epoch ms), so that two lab browsers
   * started side by side navigate at the same moment (lab fairness); null: at once. */
  start_at_ms: number | null;
  /** A standby browser (optional, default false): after attaching, the first URL waits for the
   * host's `lab_go` (lab run starts the next load's browser while the current page's quiet runs). */
  hold: boolean;
}

export type LabAdvance = "ack" | "record";

/** Dashboard queries the host answers from its store (docs/MESSAGES.md, "`query`"). */
export const QUERY_NAMES = ["protocol_counts", "plt_by_domain", "domains"] as const;
export type QueryName = (typeof QUERY_NAMES)[number];

export interface QueryParams {
  source?: "passive" | "lab" | "experiment" | "all";
  since_ms?: number | null;
  origin?: string | null;
}

/** One cell of a query_result row: the store's SQL values. */
export type Cell = string | number | null;

export type ExtensionMsg =
  | { type: "hello"; schema: typeof MSG_SCHEMA; extension_version: string; extension_id: string }
  | { type: "record"; schema: typeof MSG_SCHEMA; msg_id: string; record: NavigationRecord }
  | { type: "ping"; schema: typeof MSG_SCHEMA }
  /** Ask for the rules; `want_relay`: start the relay even without a no-h3 rule (experiments). */
  | { type: "policies"; schema: typeof MSG_SCHEMA; want_relay: boolean }
  | {
    type: "query"; schema: typeof MSG_SCHEMA; msg_id: string; query: QueryName; params: QueryParams;
    cursor: string | null; limit?: number;
  }
  /** The options page's contribution settings (docs/COLLECTOR.md); the host answers contribute_status. */
  | { type: "contribute_settings"; schema: typeof MSG_SCHEMA; msg_id: string; settings: { enabled: boolean; url: string; token: string } }
  | { type: "contribute_status"; schema: typeof MSG_SCHEMA; msg_id: string }
  /** The log tap (docs/MESSAGES.md `log`): a load's raw DevTools events, gzipped JSONL in base64,
   * with the recorder's options; sent after its record's ack, never uploaded anywhere. */
  | { type: "log"; schema: typeof MSG_SCHEMA; msg_id: string; navigation_id: string; data: string; options: ReplayOptions }
  /** Lab mode: the lab tab's last URL fired its load event (lab run starts the next browser). */
  | { type: "lab_loaded"; schema: typeof MSG_SCHEMA };

export type HostMsg =
  | { type: "hello"; schema: typeof MSG_SCHEMA; host_version: string; lab: LabConfig | null }
  | { type: "ack"; schema: typeof MSG_SCHEMA; msg_id: string; id: string; duplicate: boolean }
  | { type: "pong"; schema: typeof MSG_SCHEMA }
  /** Lab mode, a standby browser (`lab.hold`): open the first URL now, or at `start_at_ms`. */
  | { type: "lab_go"; schema: typeof MSG_SCHEMA; start_at_ms: number | null }
  | { type: "lab_loaded"; schema: typeof MSG_SCHEMA }
  | { type: "policies"; schema: typeof MSG_SCHEMA; rules: PolicyRule[]; relay: RelayInfo | null; error: string | null }
  | {
    type: "query_result"; schema: typeof MSG_SCHEMA; msg_id: string; query: QueryName; columns: string[];
    rows: Cell[][]; next_cursor: string | null;
  }
  | ContributeStatus
  /** The log tap's log for `navigation_id` is stored (docs/MESSAGES.md `log`). */
  | { type: "log_stored"; schema: typeof MSG_SCHEMA; msg_id: string; navigation_id: string; duplicate: boolean }
  | { type: "error"; schema: typeof MSG_SCHEMA; msg_id: string | null; error: string; retry: boolean };

export type HostMsgOf<T extends HostMsg["type"]> = Extract<HostMsg, { type: T }>;

/** Validation failure: `error` names the first bad field. */
export class MessageError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function str(o: Obj, k: string): string {
  const v = o[k];
  if (typeof v !== "string") throw new MessageError(`${k}: expected a string`);
  return v;
}

function bool(o: Obj, k: string): boolean {
  const v = o[k];
  if (typeof v !== "boolean") throw new MessageError(`${k}: expected a boolean`);
  return v;
}

function epochOrNull(v: unknown, name: string): number | null {
  const t = v ?? null;
  if (t !== null && (typeof t !== "number" || !Number.isFinite(t) || t < 0)) {
    throw new MessageError(`${name}: expected a time in epoch milliseconds, or null`);
  }
  return t;
}

function parseLab(v: unknown): LabConfig | null {
  if (v === null) return null;
  if (!isObj(v)) throw new MessageError("lab: expected an object or null");
  const detail = v.url_detail;
  if (!isUrlDetail(detail)) throw new MessageError("lab.url_detail: expected origin, path or full");
  const context = v.context ?? {};
  if (!isObj(context)) throw new MessageError("lab.context: expected an object");
  const nav = v.navigate ?? [];
  if (!Array.isArray(nav) || !nav.every((u): u is string => typeof u === "string" && /^https?:\/\//.test(u))) {
    throw new MessageError("lab.navigate: expected a list of http(s) URLs");
  }
  if (typeof v.record !== "boolean") throw new MessageError("lab.record: expected a boolean");
  const advance = v.advance ?? "ack";
  if (advance !== "ack" && advance !== "record") throw new MessageError("lab.advance: expected ack or record");
  const quiet = v.quiet_ms ?? null;
  if (quiet !== null && (typeof quiet !== "number" || !Number.isInteger(quiet) || quiet < 0 || quiet > DEFAULT_LIMITS.maxAfterLoadMs)) {
    throw new MessageError(`lab.quiet_ms: expected an integer from 0 to ${DEFAULT_LIMITS.maxAfterLoadMs}, or null`);
  }
  const visual = v.visual ?? false;
  if (typeof visual !== "boolean") throw new MessageError("lab.visual: expected a boolean");
  const saveLog = v.save_log ?? false;
  if (typeof saveLog !== "boolean") throw new MessageError("lab.save_log: expected a boolean");
  const startAt = epochOrNull(v.start_at_ms, "lab.start_at_ms");
  const hold = v.hold ?? false;
  if (typeof hold !== "boolean") throw new MessageError("lab.hold: expected a boolean");
  return {
    record: v.record, url_detail: detail, context, navigate: nav, advance, quiet_ms: quiet, visual, save_log: saveLog,
    start_at_ms: startAt, hold,
  };
}

const isCell = (c: unknown): c is Cell => c === null || typeof c === "string" || (typeof c === "number" && Number.isFinite(c));
const isQueryName = (q: unknown): q is QueryName => QUERY_NAMES.some((n) => n === q);

function parseQueryResult(v: Obj): HostMsgOf<"query_result"> {
  const query = v.query;
  if (!isQueryName(query)) throw new MessageError(`query: expected one of ${QUERY_NAMES.join(", ")}`);
  const columns: unknown = v.columns;
  if (!Array.isArray(columns) || !columns.every((c): c is string => typeof c === "string")) {
    throw new MessageError("columns: expected a list of strings");
  }
  const raw: unknown = v.rows;
  if (!Array.isArray(raw)) throw new MessageError("rows: expected a list");
  const rows: Cell[][] = [];
  for (const [i, row] of (raw as unknown[]).entries()) {
    if (!Array.isArray(row) || row.length !== columns.length || !row.every(isCell)) {
      throw new MessageError(`rows[${i}]: expected ${columns.length} strings, numbers or nulls`);
    }
    rows.push(row);
  }
  const next = v.next_cursor ?? null;
  if (next !== null && typeof next !== "string") throw new MessageError("next_cursor: expected a string or null");
  return { type: "query_result", schema: MSG_SCHEMA, msg_id: str(v, "msg_id"), query, columns, rows, next_cursor: next };
}

/** The only way host JSON becomes a HostMsg; throws MessageError otherwise. */
export function parseHostMessage(v: unknown): HostMsg {
  if (!isObj(v)) throw new MessageError("message: expected a JSON object");
  if (v.schema !== MSG_SCHEMA) throw new MessageError(`schema: unsupported ${JSON.stringify(v.schema)}`);
  switch (v.type) {
    case "hello":
      return { type: "hello", schema: MSG_SCHEMA, host_version: str(v, "host_version"), lab: parseLab(v.lab ?? null) };
    case "ack":
      return {
        type: "ack", schema: MSG_SCHEMA, msg_id: str(v, "msg_id"), id: str(v, "id"),
        duplicate: v.duplicate === undefined ? false : bool(v, "duplicate"),
      };
    case "pong":
      return { type: "pong", schema: MSG_SCHEMA };
    case "lab_go":
      return { type: "lab_go", schema: MSG_SCHEMA, start_at_ms: epochOrNull(v.start_at_ms, "start_at_ms") };
    case "lab_loaded":
      return { type: "lab_loaded", schema: MSG_SCHEMA };
    case "log_stored":
      return {
        type: "log_stored", schema: MSG_SCHEMA, msg_id: str(v, "msg_id"), navigation_id: str(v, "navigation_id"),
        duplicate: bool(v, "duplicate"),
      };
    case "query_result":
      return parseQueryResult(v);
    case "contribute_status":
      try {
        return parseContributeStatus(v);
      } catch (e) {
        if (e instanceof ContributeStatusError) throw new MessageError(e.message);
        throw e;
      }
    case "policies": {
      const err = v.error ?? null;
      if (err !== null && typeof err !== "string") throw new MessageError("error: expected a string or null");
      try {
        return { type: "policies", schema: MSG_SCHEMA, ...parsePolicySet(v), error: err };
      } catch (e) {
        if (e instanceof PolicyMessageError) throw new MessageError(e.message);
        throw e;
      }
    }
    case "error": {
      const msgId = v.msg_id ?? null;
      if (msgId !== null && typeof msgId !== "string") throw new MessageError("msg_id: expected a string or null");
      return {
        type: "error", schema: MSG_SCHEMA, msg_id: msgId, error: str(v, "error"),
        // older hosts send no `retry`: treat as retryable, never lose a record on a guess
        retry: v.retry === undefined ? true : bool(v, "retry"),
      };
    }
    default:
      throw new MessageError(`type: unknown message type ${JSON.stringify(v.type)}`);
  }
}

/** One handler per host message type, each given the message and the caller's context. */
export type HostHandlers<C = undefined, R = void | Promise<void>> = { readonly [T in HostMsg["type"]]: (m: HostMsgOf<T>, ctx: C) => R };

/** Calls the handler for `m.type` (the map is checked complete by `satisfies HostHandlers`). */
export function dispatchHost<C, R>(handlers: HostHandlers<C, R>, m: HostMsg, ctx: C): R {
  const h = handlers[m.type] as (x: HostMsg, ctx: C) => R;
  return h(m, ctx);
}
