/**
 * The host's `contribute_status` message (docs/MESSAGES.md, "Contributing"): validated here where
 * it enters the extension, and turned into the lines the options page and the popup show (pure).
 */
export interface ContributeStatus {
  type: "contribute_status";
  schema: 1;
  msg_id: string | null;
  enabled: boolean;
  url: string;
  token_set: boolean;
  /** Loads recorded since the collector's last accepted upload. */
  new_loads: number;
  /** What a bundle holds: table -> column names. */
  columns: Record<string, string[]>;
  last_contribution_ms: number | null;
  last_navigations: number | null;
  last_error: string | null;
}

export class ContributeStatusError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const numOrNull = (v: unknown, k: string): number | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new ContributeStatusError(`${k}: expected a number or null`);
  return v;
};

export function parseContributeStatus(v: Obj): ContributeStatus {
  const { enabled, url, token_set: tokenSet, new_loads: newLoads, columns } = v;
  if (typeof enabled !== "boolean") throw new ContributeStatusError("enabled: expected a boolean");
  if (typeof url !== "string") throw new ContributeStatusError("url: expected a string");
  if (typeof tokenSet !== "boolean") throw new ContributeStatusError("token_set: expected a boolean");
  if (typeof newLoads !== "number" || !Number.isInteger(newLoads) || newLoads < 0) {
    throw new ContributeStatusError("new_loads: expected a count");
  }
  if (!isObj(columns) || !Object.values(columns).every((c) => Array.isArray(c) && c.every((x) => typeof x === "string"))) {
    throw new ContributeStatusError("columns: expected table -> list of column names");
  }
  const msgId = v.msg_id ?? null;
  if (msgId !== null && typeof msgId !== "string") throw new ContributeStatusError("msg_id: expected a string or null");
  const err = v.last_error ?? null;
  if (err !== null && typeof err !== "string") throw new ContributeStatusError("last_error: expected a string or null");
  return {
    type: "contribute_status", schema: 1, msg_id: msgId, enabled, url, token_set: tokenSet, new_loads: newLoads,
    columns: columns as Record<string, string[]>,
    last_contribution_ms: numOrNull(v.last_contribution_ms, "last_contribution_ms"),
    last_navigations: numOrNull(v.last_navigations, "last_navigations"), last_error: err,
  };
}

/** One line for the popup, e.g. "contributing to https://c.example · last 2025-11-24 09:15 UTC (120 loads) · 7 new". */
export function contributeLine(s: ContributeStatus): string {
  if (!s.enabled) return "contributing: off";
  const last = s.last_contribution_ms === null
    ? "nothing sent yet"
    : `last ${new Date(s.last_contribution_ms).toISOString().slice(0, 16).replace("T", " ")} UTC (${s.last_navigations ?? 0} loads)`;
  const error = s.last_error === null ? "" : ` · last try failed: ${s.last_error}`;
  return `contributing to ${s.url} · ${last} · ${s.new_loads} new${error}`;
}

/** The options page's preview: what the next upload would send. */
export function previewLines(s: ContributeStatus): string[] {
  return [
    `${s.new_loads} new page load(s) would be sent.`,
    ...Object.entries(s.columns).map(([table, cols]) => `${table}: ${cols.join(", ")}`),
  ];
}
