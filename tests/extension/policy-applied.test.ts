import { describe, expect, it } from "vitest";
import { annotate, effectiveRules, mechanism } from "../../src/policy/applied.ts";
import { advance, enrol, newExperiment, pendingArm } from "../../src/experiment/assign.ts";
import type { PolicyRule, PolicySet } from "../../src/policy/ruleset.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import { readFileSync } from "node:fs";

function h2Record(): NavigationRecord {
  const events = readFileSync(new URL("../fixtures/cdp/h2.jsonl", import.meta.url), "utf8").trim().split("\n").map((l) => JSON.parse(l) as unknown);
  const recs = fromLog(events as Parameters<typeof fromLog>[0], { source: "passive", urlDetail: "full", newId: () => "00000000-0000-4000-8000-000000000000",
    env: { browser: { name: "Chromium", version: "156" }, extension_version: "0.1.0", network: null } });
  const r = recs[0];
  if (r === undefined) throw new Error("fixture has no record");
  return r;
}

const RELAY = { host: "127.0.0.1", port: 9, username: "protolens", password: "p" };
const rule = (domain: string, arm: string, latency: number | null = null): PolicyRule =>
  ({ domain, kind: "registrable", arm, latency_ms: latency, throughput_kbps: null });

describe("mechanism", () => {
  it("names what applied", () => {
    expect(mechanism("no-h3", true, false)).toBe("relay");
    expect(mechanism("no-h3", false, false)).toBe("unavailable");
    expect(mechanism("default", true, true)).toBe("none+cdp-throttling");
    expect(mechanism("h2-parallel:2", true, false)).toBe("unsupported");
  });
});

describe("annotate", () => {
  const rec = h2Record();
  const hosts = [...new Set(rec.requests.map((r) => r.host))].sort();

  it("leaves a record alone without rules or enrolment", () => {
    const out = annotate(rec, { rules: [], relay: null }, null, false, new Map(), new Set(), new Map());
    expect(out.record).toBe(rec);
  });

  it("gives every host its rule, mechanism and the applied CDP rule ids", () => {
    const set: PolicySet = { rules: [rule("a.test", "no-h3", 300)], relay: RELAY };
    const img = rec.requests.find((r) => r.host === "a.test" && r.resource_type === "Image");
    if (img === undefined) throw new Error("no a.test image");
    const applied = new Map([[img.request_id.split(":")[0] ?? "", "rule-1"]]);
    const { record } = annotate(rec, set, null, false, applied, new Set(["a.test"]), new Map());
    expect(record.policies?.map((p) => p.host)).toEqual(hosts);
    expect(record.policies?.find((p) => p.host === "a.test")).toEqual(
      { host: "a.test", rule: "a.test", arm: "no-h3", mechanism: "relay+cdp-throttling", rule_ids: ["rule-1"] });
    expect(record.policies?.find((p) => p.host === "b.test")).toEqual(
      { host: "b.test", rule: null, arm: "default", mechanism: "none", rule_ids: [] });
    expect(record.source).toBe("passive");
  });

  it("tags an enrolled page as an experiment with its pending arm, overriding a stored rule", () => {
    let exp = enrol(newExperiment(3), "a.test");
    exp = advance(exp, "a.test");
    const inEffect = new Map([["a.test", { arm: pendingArm(exp, "a.test"), since: rec.page.started_at_ms - 1 }]]);
    const { record, enrolled } = annotate(rec, { rules: [rule("a.test", "no-h3")], relay: RELAY }, exp, false, new Map(), new Set(), inEffect);
    expect(enrolled).toBe("a.test");
    expect(record.source).toBe("experiment");
    expect(record.experiment).toEqual({ name: exp.name, arm: pendingArm(exp, "a.test") });
    expect(record.policies?.find((p) => p.host === "a.test")?.arm).toBe(pendingArm(exp, "a.test"));
    expect(effectiveRules([rule("a.test", "no-h3")], exp)).toHaveLength(1);
  });

  it("does not count a no-h3 load made without a relay", () => {
    let exp = enrol(newExperiment(3), "a.test");
    if (pendingArm(exp, "a.test") !== "no-h3") exp = advance(exp, "a.test");
    const inEffect = new Map([["a.test", { arm: "default" as const, since: 0 }]]);
    const { record, enrolled } = annotate(rec, { rules: [], relay: null }, exp, false, new Map(), new Set(), inEffect);
    expect(enrolled).toBeNull();
    expect(record.source).toBe("passive");
    expect(record.policies?.find((p) => p.host === "a.test")?.mechanism).toBe("unavailable");
  });

  it("does not count a load that overlapped a switch of its domain's arm", () => {
    const exp = enrol(newExperiment(3), "a.test");
    const arm = pendingArm(exp, "a.test");
    const t0 = rec.page.started_at_ms;
    // switched after the load started, being switched, another arm in effect, none known
    for (const e of [{ arm, since: t0 + 5 }, { arm: null, since: t0 - 5 },
      { arm: arm === "no-h3" ? "default" as const : "no-h3" as const, since: t0 - 5 }]) {
      const { record, enrolled } = annotate(rec, { rules: [], relay: RELAY }, exp, false, new Map(), new Set(), new Map([["a.test", e]]));
      expect(enrolled).toBeNull();
      expect(record.source).toBe("passive");
      expect(record.experiment).toBeUndefined();
    }
    expect(annotate(rec, { rules: [], relay: RELAY }, exp, false, new Map(), new Set(), new Map()).enrolled).toBeNull();
    expect(annotate(rec, { rules: [], relay: RELAY }, exp, false, new Map(), new Set(),
      new Map([["a.test", { arm, since: t0 }]])).enrolled).toBe("a.test");
  });

  it("never turns a lab record into an experiment", () => {
    const exp = enrol(newExperiment(3), "a.test");
    const { record, enrolled } = annotate({ ...rec, source: "lab" }, { rules: [], relay: RELAY }, exp, true, new Map(), new Set(),
      new Map([["a.test", { arm: pendingArm(exp, "a.test"), since: 0 }]]));
    expect(enrolled).toBeNull();
    expect(record.source).toBe("lab");
  });
});
