/** The waterfall page's rows: every request once, on its connection; grouped by host; labels. */
import { describe, expect, it } from "vitest";
import { golden } from "../../scripts/fixture-io.ts";
import { waterfallSeries } from "../../src/waterfall/series.ts";
import type { NavigationRecord } from "../../src/record/types.ts";

describe("waterfallSeries", () => {
  for (const name of ["h1", "h2", "h3", "warm", "redirect"]) {
    it(`${name}: each request appears exactly once, on its connection's row`, () => {
      for (const r of golden(name)) {
        const wf = waterfallSeries(r);
        const drawn = wf.rows.filter((row) => !row.upstream).flatMap((row) => row.bars.map((b) => [row.key, b.requestId] as const));
        expect(drawn.map(([, id]) => id).sort()).toEqual(r.requests.map((q) => q.request_id).sort());
        for (const [key, id] of drawn) {
          const q = r.requests.find((x) => x.request_id === id);
          expect(key).toBe(q?.connection_id === null ? `cache:${q.host}` : `c${q?.connection_id}`);
        }
        const used = new Set(r.requests.flatMap((q) => (q.connection_id === null ? [] : [q.connection_id])));
        expect(wf.rows.filter((row) => row.key.startsWith("c") && !row.key.startsWith("cache:"))).toHaveLength(used.size);
      }
    });
  }

  it("h1: rows of one host are adjacent and labelled with protocol, requests and share", () => {
    const r = golden("h1")[0] as NavigationRecord;
    const wf = waterfallSeries(r);
    const groups = wf.rows.map((row) => row.group);
    expect(groups).toEqual([...groups].sort((a, b) => groups.indexOf(a) - groups.indexOf(b)));
    for (const row of wf.rows.filter((x) => x.key.startsWith("c") && !x.key.startsWith("cache:"))) {
      const c = r.connections.find((x) => `c${x.connection_id}` === row.key);
      expect(row.label).toBe(`${row.group} · h1 · ${row.bars.length} req · ${((c?.share ?? NaN) * 100).toFixed(1)}%`);
    }
    expect(wf.milestones.map(([n]) => n)).toContain("load");
  });
});
