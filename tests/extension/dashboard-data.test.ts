/** Dashboard core: query_result tables -> typed rows -> chart data and Chart.js configurations. */
import { describe, expect, it } from "vitest";
import { byteUnit, domainBars, formatBytes, originChoices, pltLines, protocolBars, shortOrigin } from "../../src/dashboard/chart-data.ts";
import { domainsConfig, protocolConfig, pltConfig } from "../../src/dashboard/chart-config.ts";
import { RowError, domainRows, pltRows, protocolCounts } from "../../src/dashboard/rows.ts";

const PLT_COLUMNS = ["day", "origin", "family", "navigations", "mean_plt_ms", "min_plt_ms", "max_plt_ms"];
const plt = (day: string, origin: string, family: string, n: number, mean: number) => [day, origin, family, n, mean, mean, mean];

describe("rows", () => {
  it("reads columns by name, whatever their order", () => {
    const t = { columns: ["failed", "family", "navigations"], rows: [[1, "h2", 5], [0, "h1", 2]] };
    expect(protocolCounts(t)).toEqual([{ family: "h2", navigations: 5, failed: 1 }, { family: "h1", navigations: 2, failed: 0 }]);
  });

  it("counts a NULL sum as zero and names a wrong or missing column", () => {
    const cols = ["origin", "navigations", "connections", "bytes", "requests"];
    expect(domainRows({ columns: cols, rows: [["https://a.test", 1, null, null, 0]] })[0])
      .toEqual({ origin: "https://a.test", navigations: 1, connections: 0, bytes: 0, requests: 0 });
    expect(() => domainRows({ columns: cols, rows: [[7, 1, 1, 1, 1]] })).toThrow(new RowError("rows[0].origin: expected a string"));
    expect(() => domainRows({ columns: cols, rows: [["o", "1", 1, 1, 1]] })).toThrow(/rows\[0\].navigations: expected a number/);
    expect(() => pltRows({ columns: ["day"], rows: [["2025-11-22"]] })).toThrow(/column origin: missing/);
  });
});

describe("protocolBars", () => {
  it("orders families h1, h2, h3, unknown and splits failed loads off", () => {
    const bars = protocolBars([
      { family: "unknown", navigations: 1, failed: 1 }, { family: "h3", navigations: 4, failed: 0 },
      { family: "h1", navigations: 6, failed: 2 }, { family: "h2", navigations: 3, failed: 0 },
    ]);
    expect(bars.families).toEqual(["h1", "h2", "h3", "unknown"]);
    expect(bars.labels).toEqual(["HTTP/1.1", "HTTP/2", "HTTP/3", "unknown"]);
    expect(bars.succeeded).toEqual([4, 3, 4, 0]);
    expect(bars.failed).toEqual([2, 0, 0, 1]);
    expect(bars.total).toBe(14);
  });

  it("merges rows of one family from several pages", () => {
    expect(protocolBars([{ family: "h2", navigations: 2, failed: 1 }, { family: "h2", navigations: 3, failed: 0 }]))
      .toMatchObject({ families: ["h2"], succeeded: [4], failed: [1], total: 5 });
  });

  it("is empty with no rows (the page shows its empty state)", () => {
    expect(protocolBars([]).total).toBe(0);
  });
});

describe("pltLines", () => {
  const rows = pltRows({
    columns: PLT_COLUMNS,
    rows: [
      plt("2025-11-23", "https://b.test", "h2", 1, 400), plt("2025-11-22", "https://a.test", "h2", 3, 100),
      plt("2025-11-22", "https://b.test", "h2", 1, 500), plt("2025-11-23", "https://a.test", "h1", 2, 300),
    ],
  });

  it("weights each origin's mean by its loads when all domains are shown", () => {
    const all = pltLines(rows, null);
    expect(all.days).toEqual(["2025-11-22", "2025-11-23"]);
    expect(all.series.map((s) => s.label)).toEqual(["HTTP/1.1", "HTTP/2"]);
    expect(all.series[0]?.values).toEqual([null, 300]);
    expect(all.series[1]?.values).toEqual([200, 400]); // (3*100 + 500) / 4
  });

  it("keeps only the picked origin's rows and days", () => {
    const b = pltLines(rows, "https://b.test");
    expect(b.days).toEqual(["2025-11-22", "2025-11-23"]);
    expect(b.series).toEqual([{ family: "h2", label: "HTTP/2", values: [500, 400] }]);
    expect(pltLines(rows, "https://none.test")).toEqual({ days: [], series: [] });
  });

  it("offers origins by navigations, most first", () => {
    expect(originChoices(rows)).toEqual(["https://a.test", "https://b.test"]);
  });
});

describe("domainBars and units", () => {
  const rows = [
    { origin: "https://small.test", navigations: 1, connections: 1, bytes: 2_000, requests: 1 },
    { origin: "https://big.test", navigations: 2, connections: 6, bytes: 3_500_000, requests: 9 },
    { origin: "https://mid.test", navigations: 1, connections: 2, bytes: 900_000, requests: 3 },
  ];

  it("takes the top origins by bytes in one unit and counts the rest", () => {
    const d = domainBars(rows, 2);
    expect(d.origins).toEqual(["https://big.test", "https://mid.test"]);
    expect(d.labels).toEqual(["big.test", "mid.test"]);
    expect(d.unit.unit).toBe("MB");
    expect(d.bytes).toEqual([3.5, 0.9]);
    expect(d.connections).toEqual([6, 2]);
    expect(d.more).toBe(1);
  });

  it("picks the largest unit at least 1 and formats table cells", () => {
    expect([0, 999, 1000, 2e6, 3e9].map((b) => byteUnit(b).unit)).toEqual(["B", "B", "KB", "MB", "GB"]);
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(4_812_345)).toBe("4.81 MB");
  });

  it("shortens long origins for the axis and keeps markup as plain text", () => {
    expect(shortOrigin("https://<img src=x onerror=alert(1)>.test", 20)).toBe("<img src=x onerror=…");
    expect(shortOrigin("http://a.test")).toBe("a.test");
  });
});

describe("chart configurations", () => {
  it("draws one bar dataset per protocol plus failed, stacked, with titled axes", () => {
    const c = protocolConfig(protocolBars([{ family: "h1", navigations: 3, failed: 1 }, { family: "h3", navigations: 2, failed: 0 }]));
    expect(c.data.datasets.map((d) => d.label)).toEqual(["HTTP/1.1", "HTTP/3", "failed"]);
    expect(c.data.datasets.map((d) => d.data)).toEqual([[2, null], [null, 2], [1, 0]]);
    expect(c.options?.scales?.y?.title).toMatchObject({ text: "navigations (count)" });
    expect(c.options?.animation).toBe(false);
  });

  it("labels PLT in ms per UTC day and domains in the chosen byte unit", () => {
    const p = pltConfig({ days: ["2025-11-22"], series: [{ family: "h2", label: "HTTP/2", values: [120] }] });
    expect(p.data.labels).toEqual(["2025-11-22"]);
    expect(p.options?.scales?.y?.title).toMatchObject({ text: "mean page load time (ms)" });
    const d = domainsConfig(domainBars([{ origin: "https://a.test", navigations: 1, connections: 2, bytes: 5000, requests: 1 }]));
    expect(d.data.datasets.map((x) => x.label)).toEqual(["bytes (KB)", "connections"]);
    expect(d.options?.scales?.bytes?.title).toMatchObject({ text: "bytes on the wire (KB)" });
  });
});
