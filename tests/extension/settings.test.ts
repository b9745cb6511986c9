/** Scope and URL detail: what is recorded, and how much of each URL is kept. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_HOLD_S, DEFAULT_SETTINGS, effective, inScope, parseHostList, parseSettings, readHold, type Settings } from "../../src/policy/settings.ts";
import { applyDetail } from "../../src/record/url-detail.ts";
import { familyOf } from "../../src/cdp/family.ts";

const on = (s: Partial<Settings> = {}): Settings => ({ ...DEFAULT_SETTINGS, enabled: true, ...s });
const LAB = { record: true, url_detail: "full" as const, context: {}, navigate: [], advance: "ack" as const, quiet_ms: null, visual: true,
  save_log: false, start_at_ms: null, hold: false };

describe("scope", () => {
  it("records nothing until the user opts in", () => {
    expect(inScope(effective(DEFAULT_SETTINGS, null), "https://a.test/", false)).toBe(false);
    expect(inScope(effective(on(), null), "https://a.test/", false)).toBe(true);
  });

  it("never incognito, chrome:// or the Web Store, even in lab mode", () => {
    for (const e of [effective(on(), null), effective(DEFAULT_SETTINGS, LAB)]) {
      expect(inScope(e, "https://a.test/", true)).toBe(false);
      expect(inScope(e, "chrome://settings", false)).toBe(false);
      expect(inScope(e, "https://chromewebstore.google.com/detail/x", false)).toBe(false);
      expect(inScope(e, "https://chrome.google.com/webstore/category", false)).toBe(false);
      expect(inScope(e, "not a url", false)).toBe(false);
      expect(inScope(e, "https://chrome.google.com/other", false)).toBe(true);
    }
  });

  it("allowlist and denylist match a domain and its subdomains only", () => {
    const allow = effective(on({ scope: "allowlist", allowlist: ["example.com"] }), null);
    expect(inScope(allow, "https://www.example.com/x", false)).toBe(true);
    expect(inScope(allow, "https://example.com/", false)).toBe(true);
    expect(inScope(allow, "https://badexample.com/", false)).toBe(false);
    const deny = effective(on({ scope: "denylist", denylist: ["bank.test"] }), null);
    expect(inScope(deny, "https://my.bank.test/", false)).toBe(false);
    expect(inScope(deny, "https://a.test/", false)).toBe(true);
  });

  it("lab mode records all with the host's detail and source lab", () => {
    expect(effective(DEFAULT_SETTINGS, LAB)).toMatchObject({ record: true, scope: "all", urlDetail: "full", source: "lab" });
    expect(effective(on(), { ...LAB, record: false }).record).toBe(false);
  });

  it("the log tap: off unless the user switches it on; in lab mode as the host says", () => {
    expect(DEFAULT_SETTINGS.saveLog).toBe(false);
    expect(effective(on(), null).saveLog).toBe(false);
    expect(effective(on({ saveLog: true }), null).saveLog).toBe(true);
    expect(effective(on({ saveLog: true }), LAB).saveLog).toBe(false);
    expect(effective(DEFAULT_SETTINGS, { ...LAB, save_log: true }).saveLog).toBe(true);
    expect(parseSettings({ enabled: true, saveLog: "yes" }).saveLog).toBe(false);
    expect(parseSettings({ enabled: true, saveLog: true }).saveLog).toBe(true);
  });

  it("visual metrics: off unless the user chooses them; in lab mode as the host says", () => {
    expect(effective(on(), null).visual).toBe(false);
    expect(effective(on({ visual: true }), null).visual).toBe(true);
    expect(effective(on({ visual: true }), { ...LAB, visual: false }).visual).toBe(false);
    expect(effective(DEFAULT_SETTINGS, LAB).visual).toBe(true);
    expect(parseSettings({ enabled: true, visual: "yes" }).visual).toBe(false);
    expect(parseSettings({ enabled: true, visual: true }).visual).toBe(true);
  });

  it("the hold after a record: 30 s unless chosen, whole seconds from 0 to an hour; a bad one typed is refused", () => {
    expect(DEFAULT_SETTINGS.holdS).toBe(DEFAULT_HOLD_S);
    expect(DEFAULT_HOLD_S).toBe(30);
    expect(parseSettings({ enabled: true, holdS: 0 }).holdS).toBe(0);
    expect(parseSettings({ enabled: true, holdS: 3600 }).holdS).toBe(3600);
    for (const bad of [-1, 2.5, 3601, "10", null, NaN]) expect(parseSettings({ enabled: true, holdS: bad }).holdS).toBe(DEFAULT_HOLD_S);
    expect(readHold(" 45 ")).toBe(45);
    expect(readHold("0")).toBe(0);
    for (const bad of ["", "-3", "1.5", "abc", "3601", "1e9"]) expect(readHold(bad)).toBeNull();
  });

  it("stored settings are validated; garbage means recording off", () => {
    expect(parseSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(parseSettings({ enabled: "yes", scope: "evil", urlDetail: "all", allowlist: [1] })).toEqual(DEFAULT_SETTINGS);
    expect(parseHostList(" *.Example.com, a.test\nA.TEST. ")).toEqual(["example.com", "a.test"]);
  });
});

describe("url detail", () => {
  it("origin, path, full", () => {
    const u = "https://user:pw@a.test:8443/p/q?x=1#frag";
    expect(applyDetail(u, "origin")).toBe("https://a.test:8443");
    expect(applyDetail(u, "path")).toBe("https://a.test:8443/p/q");
    expect(applyDetail(u, "full")).toBe("https://user:pw@a.test:8443/p/q?x=1");
    expect(applyDetail("::", "full")).toBe("");
  });

  it("property: origin and path never keep the query or fragment", () => {
    fc.assert(fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      for (const d of ["origin", "path"] as const) {
        const out = applyDetail(url, d);
        expect(out).not.toContain("?");
        expect(out).not.toContain("#");
      }
      expect(url.startsWith(applyDetail(url, "origin").split("://")[0] ?? "")).toBe(true);
    }));
  });
});

describe("protocol family", () => {
  it("normalizes Chromium's spellings", () => {
    const cases: [string, string | null][] = [["http/1.1", "h1"], ["http/1.0", "h1"], ["h2", "h2"], ["h3", "h3"],
      ["h3-29", "h3"], ["h3-Q050", "h3"], ["http/2+quic/46", "h3"], ["hq", "h3"], ["", null], ["spdy/3", null]];
    for (const [raw, fam] of cases) expect([raw, familyOf(raw)]).toEqual([raw, fam]);
  });
});
