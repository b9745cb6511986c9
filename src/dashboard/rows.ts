/**
 * query_result tables -> typed rows, by column name (docs/MESSAGES.md, "`query`"). The message
 * layer already checked every cell is a string, number or null; this checks each column has the
 * type its chart needs, and names the first one that does not.
 */
import type { Cell } from "../messages/protocol.ts";
import type { Table } from "./paging.ts";

export interface ProtocolCount {
  family: string;
  navigations: number;
  failed: number;
}

export interface PltRow {
  day: string;
  origin: string;
  family: string;
  navigations: number;
  mean_plt_ms: number;
}

export interface DomainRow {
  origin: string;
  navigations: number;
  connections: number;
  bytes: number;
  requests: number;
}

export class RowError extends Error {}

type Reader = { text: (name: string) => string; num: (name: string) => number };

function read<T>(t: Table, build: (r: Reader) => T): T[] {
  const index = new Map(t.columns.map((c, i) => [c, i]));
  return t.rows.map((row, i) => {
    const cell = (name: string): Cell => {
      const at = index.get(name);
      if (at === undefined) throw new RowError(`column ${name}: missing`);
      return row[at] ?? null;
    };
    return build({
      text: (name) => {
        const v = cell(name);
        if (typeof v !== "string") throw new RowError(`rows[${i}].${name}: expected a string`);
        return v;
      },
      num: (name) => {
        const v = cell(name);
        // SQL sum() over no rows is NULL: count it as zero
        if (v === null) return 0;
        if (typeof v !== "number") throw new RowError(`rows[${i}].${name}: expected a number`);
        return v;
      },
    });
  });
}

export const protocolCounts = (t: Table): ProtocolCount[] =>
  read(t, (r) => ({ family: r.text("family"), navigations: r.num("navigations"), failed: r.num("failed") }));

export const pltRows = (t: Table): PltRow[] =>
  read(t, (r) => ({
    day: r.text("day"), origin: r.text("origin"), family: r.text("family"),
    navigations: r.num("navigations"), mean_plt_ms: r.num("mean_plt_ms"),
  }));

export const domainRows = (t: Table): DomainRow[] =>
  read(t, (r) => ({
    origin: r.text("origin"), navigations: r.num("navigations"), connections: r.num("connections"),
    bytes: r.num("bytes"), requests: r.num("requests"),
  }));
