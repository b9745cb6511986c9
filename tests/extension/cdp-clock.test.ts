import { describe, expect, it } from "vitest";
import { CdpClock } from "../../src/cdp/clock";

describe("CdpClock", () => {
  it("is null before any event and then runs with the local clock", () => {
    const c = new CdpClock();
    expect(c.now(0)).toBeNull();
    c.observe(100, 5_000);
    expect(c.now(5_000)).toBeCloseTo(100, 9);
    expect(c.now(5_600)).toBeCloseTo(100.6, 9);
  });

  it("is not set back by an event delivered long after its timestamp", () => {
    // the real-web single-page app: firstPaint at 100.0 delivered at once, networkIdle and
    // firstMeaningfulPaint stamped 100.0 delivered 500 ms later, then the pushState 600 ms
    // after load: the clock must say 100.6 there, not 100.1
    const c = new CdpClock();
    c.observe(100.0, 1_000);
    c.observe(100.0, 1_500);
    c.observe(99.98, 1_510);
    expect(c.now(1_600)).toBeCloseTo(100.6, 9);
  });

  it("takes the smallest delivery delay seen: a later prompt event moves it forward", () => {
    const c = new CdpClock();
    c.observe(100.0, 1_050); // delivered 50 ms late
    expect(c.now(1_050)).toBeCloseTo(100.0, 9);
    c.observe(100.2, 1_200); // delivered at once: the offset was 50 ms short
    expect(c.now(1_300)).toBeCloseTo(100.3, 9);
  });
});
