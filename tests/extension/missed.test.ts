/** Commits the recorder never saw (src/cdp/missed.ts): a navigation record takes the first waiting
 * commit of its unreduced URL; the commits reported before that one, and those still waiting at
 * the end, are missed and get records of their own. */
import { describe, expect, it } from "vitest";
import { golden } from "../../scripts/fixture-io.ts";
import { MissedCommits } from "../../src/cdp/missed.ts";
import type { NavigationRecord, PageKind } from "../../src/record/types.ts";

const base = golden("h2")[0] as NavigationRecord;
const A = "https://a.test";

function setup(): { m: MissedCommits; rec: (id: string, path: string, kind?: PageKind) => NavigationRecord } {
  const full = new Map<string, string>();
  let n = 0;
  const m = new MissedCommits({
    source: "passive", urlDetail: "origin", env: { browser: base.page.browser, extension_version: "1", network: null },
    newId: () => `m${++n}`,
  }, (id) => full.get(id));
  const rec = (id: string, path: string, kind: PageKind = "navigation"): NavigationRecord => {
    full.set(id, A + path);
    // the record itself carries the URL at its detail (here the origin): it cannot tell pages apart
    return { ...base, id, page: { ...base.page, url: A, started_at_ms: 1, kind } };
  };
  return { m, rec };
}
const ids = (rs: NavigationRecord[]): string[] => rs.map((r) => r.id);

describe("missed commits", () => {
  it("a record of the commit's page covers it, whatever the clocks say: nothing is added", () => {
    const { m, rec } = setup();
    m.expect([{ url: `${A}/p?q=1#frag`, at: 1_000 }]);
    expect(ids(m.pass([rec("own", "/p?q=1")]))).toEqual(["own"]);
    expect(m.close()).toEqual([]);
  });

  it("a script redirect's first page, committed and left unseen: its record comes before the landing page's", () => {
    const { m, rec } = setup();
    m.expect([{ url: `${A}/script.html?secret=1`, at: 1_000 }, { url: `${A}/landing.html`, at: 1_060 }]);
    const out = m.pass([rec("landing", "/landing.html")]);
    expect(ids(out)).toEqual(["m1", "landing"]);
    expect(out[0]?.page).toMatchObject({ url: A, origin: A, url_detail: "origin", started_at_ms: 1_000, late_attach: "missed",
      aborted: true, incomplete: true, incomplete_reasons: ["aborted"], not_seen: ["requests_before_attach"], kind: "navigation" });
    expect(out[0]?.source).toBe("passive");
    expect([out[0]?.requests, out[0]?.connections, out[0]?.hosts]).toEqual([[], [], []]);
    expect(Object.values(out[0]?.milestones ?? {}).every((v) => v === null)).toBe(true);
    expect(m.close()).toEqual([]);
  });

  it("a prerender's activation is a record of its own kind: complete, not aborted, no request, the prerender's declared", () => {
    const { m, rec } = setup();
    // shown, then left for a page the recorder saw: its record comes before that page's
    m.expect([{ url: `${A}/next.html`, at: 2_014, startedAt: 2_000, activation: true }, { url: `${A}/after.html`, at: 9_000 }]);
    const out = m.pass([rec("after", "/after.html")]);
    expect(ids(out)).toEqual(["m1", "after"]);
    expect(out[0]?.page).toMatchObject({ url: A, started_at_ms: 2_000, kind: "prerender", late_attach: null, aborted: false,
      incomplete: false, incomplete_reasons: [], not_seen: ["requests_before_attach"] });
    expect([out[0]?.requests, out[0]?.connections, out[0]?.hosts]).toEqual([[], [], []]);
    expect(Object.values(out[0]?.milestones ?? {}).every((v) => v === null)).toBe(true);
    // one still waiting at the close: the same
    m.expect([{ url: `${A}/n2.html`, at: 5_000, activation: true }]);
    expect(m.close().map((r) => [r.page.kind, r.page.aborted, r.page.started_at_ms])).toEqual([["prerender", false, 5_000]]);
  });

  it("a missed page starts when its navigation did, if known", () => {
    const { m } = setup();
    m.expect([{ url: `${A}/s`, at: 1_000, startedAt: 950 }]);
    expect(m.close().map((r) => r.page.started_at_ms)).toEqual([950]);
  });

  it("a soft navigation's or a restore's record takes no commit; a commit no record takes is missed at the close", () => {
    const { m, rec } = setup();
    m.expect([{ url: `${A}/x`, at: 1_000 }]);
    expect(ids(m.pass([rec("soft", "/x", "soft"), rec("restore", "/x", "bfcache")]))).toEqual(["soft", "restore"]);
    expect(m.close().map((r) => [r.page.late_attach, r.page.started_at_ms])).toEqual([["missed", 1_000]]);
    expect(m.close()).toEqual([]);
  });

  it("a commit reported after its record was handed out matches it; records whose commit is never reported take none", () => {
    const { m, rec } = setup();
    expect(ids(m.pass([rec("out-of-scope", "/b"), rec("e", "/e")]))).toEqual(["out-of-scope", "e"]);
    m.expect([{ url: `${A}/e`, at: 520 }]);
    m.expect([{ url: `${A}/f`, at: 600 }, { url: `${A}/g`, at: 700 }]);
    // g's record: f, reported before it and never recorded, is missed
    expect(ids(m.pass([rec("g", "/g")]))).toEqual(["m1", "g"]);
    expect(m.close()).toEqual([]);
  });

  it("each record takes one commit: a page loaded twice with one record leaves one commit missed", () => {
    const { m, rec } = setup();
    m.expect([{ url: `${A}/r`, at: 100 }, { url: `${A}/r`, at: 200 }]);
    expect(ids(m.pass([rec("r", "/r")]))).toEqual(["r"]);
    expect(m.close().map((r) => r.page.started_at_ms)).toEqual([200]);
  });
});
