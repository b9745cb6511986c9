/**
 * Typed query rows -> what each dashboard chart draws (pure). Families are the main document's
 * protocol family (docs/RECORD.md); labels keep the host's strings as data, never markup.
 */
import type { DomainRow, PltRow, ProtocolCount } from "./rows.ts";

export const FAMILY_ORDER = ["h1", "h2", "h3", "unknown"] as const;

export const FAMILY_NAME: Record<string, string> = {
  h1: "HTTP/1.1", h2: "HTTP/2", h3: "HTTP/3", unknown: "unknown",
};

/** Same hues as the popup's badges (extension/popup.css). */
export const FAMILY_COLOR: Record<string, string> = {
  h1: "#b45309", h2: "#1d4ed8", h3: "#047857", unknown: "#6b7280",
};

export const familyName = (f: string): string => FAMILY_NAME[f] ?? f;
export const familyColor = (f: string): string => FAMILY_COLOR[f] ?? "#9ca3af";

function familyRank(f: string): number {
  const i = (FAMILY_ORDER as readonly string[]).indexOf(f);
  return i < 0 ? FAMILY_ORDER.length : i;
}

const byFamily = (a: string, b: string): number => familyRank(a) - familyRank(b) || a.localeCompare(b);

export interface ProtocolBars {
  families: string[];
  labels: string[];
  succeeded: number[];
  failed: number[];
  total: number;
}

/** Navigations per protocol family, split into loads that succeeded and failed. */
export function protocolBars(counts: ProtocolCount[]): ProtocolBars {
  const merged = new Map<string, { navigations: number; failed: number }>();
  for (const c of counts) {
    const m = merged.get(c.family) ?? { navigations: 0, failed: 0 };
    m.navigations += c.navigations;
    m.failed += c.failed;
    merged.set(c.family, m);
  }
  const families = [...merged.keys()].sort(byFamily);
  const get = (f: string) => merged.get(f) ?? { navigations: 0, failed: 0 };
  return {
    families,
    labels: families.map(familyName),
    succeeded: families.map((f) => get(f).navigations - get(f).failed),
    failed: families.map((f) => get(f).failed),
    total: families.reduce((s, f) => s + get(f).navigations, 0),
  };
}

export interface Series {
  family: string;
  label: string;
  /** One value per day, null where that family had no successful load that day. */
  values: (number | null)[];
}

export interface PltLines {
  days: string[];
  series: Series[];
}

/**
 * Mean PLT per day and family, for one origin or (origin null) for all origins together: the
 * mean of per-origin means weighted by their navigation counts, i.e. the mean over all loads.
 */
export function pltLines(rows: PltRow[], origin: string | null): PltLines {
  const picked = origin === null ? rows : rows.filter((r) => r.origin === origin);
  const days = [...new Set(picked.map((r) => r.day))].sort();
  const families = [...new Set(picked.map((r) => r.family))].sort(byFamily);
  const sums = new Map<string, { ms: number; n: number }>();
  for (const r of picked) {
    const key = `${r.family}\u0000${r.day}`;
    const s = sums.get(key) ?? { ms: 0, n: 0 };
    s.ms += r.mean_plt_ms * r.navigations;
    s.n += r.navigations;
    sums.set(key, s);
  }
  return {
    days,
    series: families.map((family) => ({
      family,
      label: familyName(family),
      values: days.map((d) => {
        const s = sums.get(`${family}\u0000${d}`);
        return s && s.n > 0 ? Math.round(s.ms / s.n) : null;
      }),
    })),
  };
}

/** Origins of the PLT rows, most navigations first (the domain picker's options). */
export function originChoices(rows: PltRow[]): string[] {
  const n = new Map<string, number>();
  for (const r of rows) n.set(r.origin, (n.get(r.origin) ?? 0) + r.navigations);
  return [...n.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([o]) => o);
}

export interface ByteUnit {
  unit: "B" | "KB" | "MB" | "GB";
  divisor: number;
}

/** The largest unit in which `maxBytes` is at least 1 (1 KB = 1000 B). */
export function byteUnit(maxBytes: number): ByteUnit {
  const units: ByteUnit[] = [
    { unit: "GB", divisor: 1e9 }, { unit: "MB", divisor: 1e6 }, { unit: "KB", divisor: 1e3 },
  ];
  return units.find((u) => maxBytes >= u.divisor) ?? { unit: "B", divisor: 1 };
}

/** An origin short enough for a chart axis: scheme dropped, long names cut with an ellipsis. */
export function shortOrigin(origin: string, max = 32): string {
  const bare = origin.replace(/^https?:\/\//, "");
  return bare.length <= max ? bare : `${bare.slice(0, max - 1)}…`;
}

export interface DomainBars {
  origins: string[];
  labels: string[];
  unit: ByteUnit;
  bytes: number[];
  connections: number[];
  /** Origins beyond `top` (still in the table, not in the chart). */
  more: number;
}

/** The `top` origins by bytes (the host already sorts most bytes first; sorted again here). */
export function domainBars(rows: DomainRow[], top = 12): DomainBars {
  const sorted = [...rows].sort((a, b) => b.bytes - a.bytes || a.origin.localeCompare(b.origin));
  const shown = sorted.slice(0, top);
  const unit = byteUnit(Math.max(0, ...shown.map((r) => r.bytes)));
  return {
    origins: shown.map((r) => r.origin),
    labels: shown.map((r) => shortOrigin(r.origin)),
    unit,
    bytes: shown.map((r) => Math.round((r.bytes / unit.divisor) * 100) / 100),
    connections: shown.map((r) => r.connections),
    more: Math.max(0, sorted.length - top),
  };
}

/** Bytes for a table cell, e.g. "4.81 MB". */
export function formatBytes(bytes: number): string {
  const u = byteUnit(bytes);
  return u.unit === "B" ? `${bytes} B` : `${(bytes / u.divisor).toFixed(2)} ${u.unit}`;
}
