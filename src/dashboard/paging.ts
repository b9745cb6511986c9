/**
 * Following a query's pages (docs/MESSAGES.md, "`query`"): the host caps each reply well under
 * the 1 MB host -> extension limit and hands back `next_cursor` until the last page (`null`).
 * Pure: `ask` is the port adapter (or a fake in tests).
 */
import type { Cell } from "../messages/protocol.ts";

export interface Page {
  columns: string[];
  rows: Cell[][];
  next_cursor: string | null;
}

export interface Table {
  columns: string[];
  rows: Cell[][];
}

export type Ask = (cursor: string | null) => Promise<Page>;

export class PagingError extends Error {}

/** Every row of a query: asks page after page until `next_cursor` is null. */
export async function fetchAll(ask: Ask, maxPages = 10_000): Promise<Table> {
  const rows: Cell[][] = [];
  let columns: string[] | null = null;
  let cursor: string | null = null;
  const seen = new Set<string>();
  for (let n = 0; n < maxPages; n++) {
    const page: Page = await ask(cursor);
    if (columns !== null && page.columns.join("\u0000") !== columns.join("\u0000")) {
      throw new PagingError("columns changed between pages");
    }
    columns = page.columns;
    rows.push(...page.rows);
    if (page.next_cursor === null) return { columns, rows };
    // a host that hands back a cursor it already gave would make this loop forever
    if (seen.has(page.next_cursor)) throw new PagingError(`cursor ${page.next_cursor} repeated`);
    seen.add(page.next_cursor);
    cursor = page.next_cursor;
  }
  throw new PagingError(`more than ${maxPages} pages`);
}
