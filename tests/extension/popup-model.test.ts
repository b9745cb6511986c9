/** The popup's view model: one bar per connection by share, badges per host, page text kept raw. */
import { describe, expect, it } from "vitest";
import { golden } from "../../scripts/fixture-io.ts";
import { popupModel } from "../../src/ui/popup-model.ts";
import type { NavigationRecord } from "../../src/record/types.ts";

describe("popupModel", () => {
  it("h1: one bar per connection, widest first, widths are the shares", () => {
    const r = golden("h1")[0] as NavigationRecord;
    const m = popupModel(r);
    expect(m.bars).toHaveLength(r.connections.length);
    const widths = m.bars.map((b) => b.widthPct);
    expect(widths).toEqual([...widths].sort((a, b) => b - a));
    expect(widths.reduce((s, w) => s + w, 0)).toBeCloseTo(100, 6);
    expect(m.hosts.map((h) => h.badge)).toEqual(["H1", "H1"]);
    expect(m.mainFamily).toBe("H1");
    expect(m.plt).toBe(`${Math.round(r.milestones.load_ms ?? NaN)} ms`);
  });

  it("aborted navigations say so and have no PLT", () => {
    const m = popupModel(golden("aborted")[0] as NavigationRecord);
    expect(m.plt).toBe("no load event");
    expect(m.note).toContain("aborted");
  });

  it("keeps page-controlled strings as text, unmodified (the view sets textContent)", () => {
    const r = golden("h2")[0] as NavigationRecord;
    const evil = "https://a.test/<img src=x onerror=alert(1)>";
    const m = popupModel({ ...r, page: { ...r.page, url: evil } });
    expect(m.url).toBe(evil);
  });
});
