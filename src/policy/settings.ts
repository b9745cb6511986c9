/**
 * The user's recording settings and the scope rule: which tab URLs are recorded. Pure.
 * Nothing is recorded until the user opts in on the options page (`enabled`), except in a lab
 * profile, where the host's hello reply (docs/MESSAGES.md "Lab mode") switches recording on.
 */
import { isUrlDetail } from "../record/url-detail.ts";
import type { LabConfig } from "../messages/protocol.ts";
import type { Source, UrlDetail } from "../record/types.ts";

export type Scope = "all" | "allowlist" | "denylist";

export interface Settings {
  enabled: boolean;
  scope: Scope;
  /** Host names; "example.com" also matches its subdomains. */
  allowlist: string[];
  denylist: string[];
  urlDetail: UrlDetail;
  /** Also capture paint progress (the tab's screencast) for the visual metrics: off unless chosen. */
  visual: boolean;
  /** The log tap: keep each load's raw DevTools events beside its record, on this computer only
   * (docs/MESSAGES.md `log`): off unless chosen. */
  saveLog: boolean;
  /** Seconds a tab stays attached after its page is recorded (0: let go at once), so that the
   * next page opened in it within that time is read from its first request (src/worker/on-record.ts). */
  holdS: number;
}

/** A tab is held this long after its record by default: ProtoLens's choice, not from the papers
 * (docs/RECORD.md "Late attach"): a page read and left within half a minute, as when clicking
 * through a site, has its next page recorded whole; the debugging bar goes about 35 s after the
 * last record. */
export const DEFAULT_HOLD_S = 30;
/** The longest hold the options page accepts (an hour). */
export const MAX_HOLD_S = 3600;

export const DEFAULT_SETTINGS: Settings = {
  enabled: false, scope: "all", allowlist: [], denylist: [], urlDetail: "origin", visual: false, saveLog: false,
  holdS: DEFAULT_HOLD_S,
};

const isHold = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= MAX_HOLD_S;

/** A hold as typed on the options page: a whole number of seconds in [0, MAX_HOLD_S], else null. */
export function readHold(text: string): number | null {
  const n = text.trim() === "" ? NaN : Number(text);
  return isHold(n) ? n : null;
}

const isHostList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** Stored JSON -> Settings; anything malformed falls back to the (recording-off) default. */
export function parseSettings(v: unknown): Settings {
  if (typeof v !== "object" || v === null) return DEFAULT_SETTINGS;
  const o = v as Record<string, unknown>;
  const scope = o.scope === "allowlist" || o.scope === "denylist" || o.scope === "all" ? o.scope : "all";
  return {
    enabled: o.enabled === true,
    scope,
    allowlist: isHostList(o.allowlist) ? o.allowlist.map(normalizeHost).filter(Boolean) : [],
    denylist: isHostList(o.denylist) ? o.denylist.map(normalizeHost).filter(Boolean) : [],
    urlDetail: isUrlDetail(o.urlDetail) ? o.urlDetail : "origin",
    visual: o.visual === true,
    saveLog: o.saveLog === true,
    holdS: isHold(o.holdS) ? o.holdS : DEFAULT_HOLD_S,
  };
}

export function normalizeHost(h: string): string {
  return h.trim().toLowerCase().replace(/^\*\./, "").replace(/\.$/, "");
}

/** Parses a user's text (one host per line or comma-separated) into a host list. */
export function parseHostList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map(normalizeHost).filter(Boolean))];
}

function matches(host: string, list: readonly string[]): boolean {
  return list.some((d) => host === d || host.endsWith(`.${d}`));
}

/** Pages the debugger cannot or must not attach to (docs/ARCHITECTURE.md: chrome://, Web Store). */
export function isRestricted(url: URL): boolean {
  if (url.protocol !== "http:" && url.protocol !== "https:") return true;
  if (url.hostname === "chromewebstore.google.com") return true;
  return url.hostname === "chrome.google.com" && url.pathname.startsWith("/webstore");
}

export interface Effective {
  record: boolean;
  scope: Scope;
  allowlist: string[];
  denylist: string[];
  urlDetail: UrlDetail;
  source: Source;
  /** The recorder's network quiet after load, ms (null: its default). */
  quietMs: number | null;
  visual: boolean;
  saveLog: boolean;
}

/** What applies now: the lab config when the host gave one, else the user's settings. */
export function effective(s: Settings, lab: LabConfig | null): Effective {
  if (lab !== null) {
    return {
      record: lab.record, scope: "all", allowlist: [], denylist: [], urlDetail: lab.url_detail, source: "lab",
      quietMs: lab.quiet_ms, visual: lab.visual, saveLog: lab.save_log,
    };
  }
  return {
    record: s.enabled, scope: s.scope, allowlist: s.allowlist, denylist: s.denylist, urlDetail: s.urlDetail, source: "passive",
    quietMs: null, visual: s.visual, saveLog: s.saveLog,
  };
}

/** Is a tab at `rawUrl` recorded? Incognito never; restricted pages never. */
export function inScope(e: Effective, rawUrl: string, incognito: boolean): boolean {
  if (!e.record || incognito) return false;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return false;
  }
  if (isRestricted(url)) return false;
  const host = url.hostname.toLowerCase();
  switch (e.scope) {
    case "all":
      return true;
    case "allowlist":
      return matches(host, e.allowlist);
    case "denylist":
      return !matches(host, e.denylist);
  }
}
