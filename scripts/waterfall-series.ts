// Prints the extension's waterfall rows (src/waterfall/series.ts) for each record in a JSON file
// (one record or a list), as JSON lines: {id, rows: [{key, label, bars: [requestId...], setups}],
// milestones}. tests/plots/test_waterfall_parity.py compares them with the host's rows.
// Usage: tsx scripts/waterfall-series.ts FILE
import { readFileSync } from "node:fs";
import type { NavigationRecord } from "../src/record/types.ts";
import { waterfallSeries } from "../src/waterfall/series.ts";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: tsx scripts/waterfall-series.ts FILE");
const data: unknown = JSON.parse(readFileSync(file, "utf8"));
const records = (Array.isArray(data) ? data : [data]) as NavigationRecord[];
for (const rec of records) {
  const wf = waterfallSeries(rec);
  const rows = wf.rows.map((r) => ({ key: r.key, label: r.label, bars: r.bars.map((b) => b.requestId), setups: r.bars.map((b) => b.setup) }));
  console.log(JSON.stringify({ id: rec.id, rows, milestones: wf.milestones }));
}
