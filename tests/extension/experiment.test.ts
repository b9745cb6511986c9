import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  EXPERIMENT_ARMS, advance, armAt, armsApplied, blockOrder, enrol, enrolledDomain, newExperiment, parseExperiment, pendingArm,
  ranUnder, unenrol,
} from "../../src/experiment/assign.ts";

describe("arm assignment", () => {
  it("is balanced after every block and never off by more than one", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.domain(), fc.integer({ min: 1, max: 200 }), (seed, domain, n) => {
      const counts = { default: 0, "no-h3": 0 };
      for (let i = 0; i < n; i++) {
        counts[armAt(seed, domain, i, EXPERIMENT_ARMS)] += 1;
        const diff = Math.abs(counts.default - counts["no-h3"]);
        if (diff > 1) return false;
        if ((i + 1) % 2 === 0 && diff !== 0) return false;
      }
      return true;
    }));
  });
  it("is balanced for more arms too", () => {
    const arms = ["a", "b", "c"] as const;
    const n = 300;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) counts.set(armAt(7, "x.org", i, arms), (counts.get(armAt(7, "x.org", i, arms)) ?? 0) + 1);
    expect([...counts.values()]).toEqual([100, 100, 100]);
  });
  it("is random within blocks: both orders occur, roughly half each", () => {
    let firstDefault = 0;
    for (let b = 0; b < 1000; b++) if (blockOrder(42, "example.org", b, EXPERIMENT_ARMS)[0] === "default") firstDefault++;
    expect(firstDefault).toBeGreaterThan(430);
    expect(firstDefault).toBeLessThan(570);
  });
  it("is deterministic per seed and differs between seeds and domains", () => {
    const seq = (seed: number, d: string) => Array.from({ length: 40 }, (_, i) => armAt(seed, d, i, EXPERIMENT_ARMS)).join();
    expect(seq(1, "a.org")).toBe(seq(1, "a.org"));
    expect(seq(1, "a.org")).not.toBe(seq(2, "a.org"));
    expect(seq(1, "a.org")).not.toBe(seq(1, "b.org"));
  });
});

describe("enrolment state", () => {
  it("enrols, advances per domain, and leaves", () => {
    let s = enrol(enrol(newExperiment(9), "Example.ORG"), "*.news.net");
    expect(s.domains).toEqual(["example.org", "news.net"]);
    expect(enrol(s, "not a domain")).toBe(s);
    expect(enrolledDomain(s, "www.example.org")).toBe("example.org");
    expect(enrolledDomain(s, "badexample.org")).toBeNull();
    const first = pendingArm(s, "example.org");
    s = advance(s, "example.org");
    expect(s.counts).toEqual({ "example.org": 1 });
    expect(pendingArm(s, "example.org")).not.toBe(first); // the block's other arm
    s = unenrol(s, "example.org");
    expect(s.domains).toEqual(["news.net"]);
    expect(s.counts).toEqual({});
  });
  it("survives storage round trips and rejects garbage", () => {
    const s = advance(enrol(newExperiment(5), "a.org"), "a.org");
    expect(parseExperiment(JSON.parse(JSON.stringify(s)))).toEqual(s);
    expect(parseExperiment(null)).toBeNull();
    expect(parseExperiment({ name: "x", seed: "1", domains: [] })).toBeNull();
    expect(parseExperiment({ name: "x", seed: 1, domains: ["ok.org", "bad domain", 3], counts: { "ok.org": -2 } }))
      .toEqual({ name: "x", seed: 1, domains: ["ok.org"], counts: { "ok.org": 0 } });
  });
});

describe("arms in effect", () => {
  it("applies each domain's pending arm; no-h3 only with the PAC", () => {
    let s = enrol(enrol(newExperiment(11), "a.test"), "b.test");
    while (pendingArm(s, "a.test") !== "no-h3") s = advance(s, "a.test");
    expect(armsApplied(s, true).get("a.test")).toBe("no-h3");
    expect(armsApplied(s, false).get("a.test")).toBe("default");
    expect(armsApplied(s, true).get("b.test")).toBe(pendingArm(s, "b.test"));
    expect(armsApplied(null, true).size).toBe(0);
  });

  it("counts a load only under an arm in effect since before it started", () => {
    expect(ranUnder({ arm: "no-h3", since: 100 }, "no-h3", 100)).toBe(true);
    expect(ranUnder({ arm: "no-h3", since: 101 }, "no-h3", 100)).toBe(false);
    expect(ranUnder({ arm: "default", since: 0 }, "no-h3", 100)).toBe(false);
    expect(ranUnder({ arm: null, since: 0 }, "no-h3", 100)).toBe(false);
    expect(ranUnder(undefined, "default", 100)).toBe(false);
  });
});
