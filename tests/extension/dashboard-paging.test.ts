/** The dashboard follows next_cursor to the last page, and refuses a host that loops. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageError, parseHostMessage } from "../../src/messages/protocol.ts";
import { PagingError, fetchAll, type Page } from "../../src/dashboard/paging.ts";

/** A fake host: `rows` served `per` rows a page, cursors are offsets (as the real host's). */
function pager(rows: number[][], per: number) {
  const asked: (string | null)[] = [];
  const ask = (cursor: string | null): Promise<Page> => {
    asked.push(cursor);
    const at = cursor === null ? 0 : Number(cursor);
    const end = at + per;
    return Promise.resolve({ columns: ["n"], rows: rows.slice(at, end), next_cursor: end < rows.length ? String(end) : null });
  };
  return { ask, asked };
}

describe("fetchAll", () => {
  it("returns every row once, in order, across pages", async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.integer(), { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), async (xs, per) => {
      const rows = xs.map((x) => [x]);
      const p = pager(rows, per);
      const t = await fetchAll(p.ask);
      expect(t.rows).toEqual(rows);
      expect(p.asked[0]).toBeNull();
      expect(p.asked.length).toBe(Math.max(1, Math.ceil(rows.length / per)));
    }));
  });

  it("stops on a repeated cursor, changed columns or too many pages", async () => {
    const loop = () => Promise.resolve({ columns: ["n"], rows: [[1]], next_cursor: "5" });
    await expect(fetchAll(loop)).rejects.toThrow(new PagingError("cursor 5 repeated"));
    let n = 0;
    const shifting = () => Promise.resolve({ columns: [`c${n}`], rows: [], next_cursor: String(++n) });
    await expect(fetchAll(shifting)).rejects.toThrow(/columns changed/);
    let m = 0;
    const endless = () => Promise.resolve({ columns: ["n"], rows: [], next_cursor: String(++m) });
    await expect(fetchAll(endless, 3)).rejects.toThrow(/more than 3 pages/);
  });

  it("passes the host's error on", async () => {
    await expect(fetchAll(() => Promise.reject(new Error("host: store: locked")))).rejects.toThrow("host: store: locked");
  });
});

describe("parseHostMessage: query_result", () => {
  const ok = { type: "query_result", schema: 1, msg_id: "q1", query: "domains", columns: ["origin", "bytes"], rows: [["https://a.test", 5]], next_cursor: "1" };

  it("accepts the documented reply", () => {
    expect(parseHostMessage(ok)).toEqual(ok);
    expect(parseHostMessage({ ...ok, next_cursor: null, rows: [] })).toMatchObject({ next_cursor: null, rows: [] });
  });

  it("names the first bad field", () => {
    const bad: [unknown, RegExp][] = [
      [{ ...ok, query: "everything" }, /query: expected one of/],
      [{ ...ok, columns: "origin" }, /columns/],
      [{ ...ok, rows: {} }, /rows: expected a list/],
      [{ ...ok, rows: [["https://a.test"]] }, /rows\[0\]/],
      [{ ...ok, rows: [["https://a.test", { html: "<b>" }]] }, /rows\[0\]/],
      [{ ...ok, rows: [["https://a.test", Number.NaN]] }, /rows\[0\]/],
      [{ ...ok, next_cursor: 500 }, /next_cursor/],
      [{ ...ok, msg_id: undefined }, /msg_id/],
    ];
    for (const [v, re] of bad) expect(() => parseHostMessage(v)).toThrow(re);
    expect(() => parseHostMessage({ ...ok, rows: [[1, 2, 3]] })).toThrow(MessageError);
  });
});
