/** The dashboard's period select maps to the host's since_ms. */
import { describe, expect, it } from "vitest";
import { PERIODS, periodOf, sinceMs } from "../../src/dashboard/period.ts";

const NOW = 1_795_000_000_000;

describe("period", () => {
  it("all time has no lower bound", () => {
    expect(sinceMs("all", NOW)).toBeNull();
  });
  it("each bounded period starts that many days before now", () => {
    expect(sinceMs("day", NOW)).toBe(NOW - 86_400_000);
    expect(sinceMs("week", NOW)).toBe(NOW - 7 * 86_400_000);
    expect(sinceMs("month", NOW)).toBe(NOW - 30 * 86_400_000);
  });
  it("reads the select's values and falls back to all time", () => {
    for (const p of Object.keys(PERIODS)) expect(periodOf(p)).toBe(p);
    expect(periodOf("decade")).toBe("all");
    expect(periodOf("__proto__")).toBe("all");
    expect(periodOf("")).toBe("all");
  });
});
