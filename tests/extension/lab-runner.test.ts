/** The lab runner's start time (src/adapters/lab-runner.ts): the first URL opens no earlier than
 * `start_at_ms`, at once without it or when the browser is already late. The extension APIs
 * cannot run under node: `webextension-polyfill` is replaced by an in-memory stand-in here; the
 * real browser path is tests/lab/test_fairness_testbed.py (both sides' first packets on the wire). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const opened: { url: string; at: number }[] = [];
const session = new Map<string, unknown>();
vi.mock("webextension-polyfill", () => ({
  default: {
    storage: { session: {
      get: (k: string) => Promise.resolve({ [k]: session.get(k) }),
      set: (o: Record<string, unknown>) => { for (const [k, v] of Object.entries(o)) session.set(k, v); return Promise.resolve(); },
    } },
    tabs: {
      create: () => Promise.resolve({ id: 7 }),
      update: (_id: number, p: { url: string }) => { opened.push({ url: p.url, at: Date.now() }); return Promise.resolve(); },
    },
  },
}));
const attachNothing = (): Promise<void> => Promise.resolve();

const { LabRunner } = await import("../../src/adapters/lab-runner.ts");
const T0 = 1_800_000_000_000;

describe("LabRunner start time", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    opened.length = 0;
    session.clear();
  });
  afterEach(() => { vi.useRealTimers(); });

  it("waits for start_at_ms before the first URL", async () => {
    const attached: number[] = [];
    const run = new LabRunner((tab) => { attached.push(tab); return Promise.resolve(); });
    const started = run.start(["https://a.test/"], "ack", T0 + 1500);
    await vi.advanceTimersByTimeAsync(1499);
    expect(attached).toEqual([7]);
    expect(opened).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await started;
    expect(opened).toEqual([{ url: "https://a.test/", at: T0 + 1500 }]);
  });

  it("opens at once without a start time, or when it is already past", async () => {
    await new LabRunner(attachNothing).start(["https://a.test/"], "ack", null);
    expect(opened.map((o) => o.at)).toEqual([T0]);
    session.clear();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await new LabRunner(attachNothing).start(["https://b.test/"], "ack", T0 - 40);
    expect(opened.map((o) => o.url)).toEqual(["https://a.test/", "https://b.test/"]);
    expect(opened[1]?.at).toBe(T0);
    expect(warn).toHaveBeenCalledWith("protolens: lab start 40 ms late");
  });
});
