/** The lab runner's start time (src/adapters/lab-runner.ts): the first URL opens no earlier than
 * `start_at_ms`, at once without it or when the browser is already late. The extension APIs
 * cannot run under node: `webextension-polyfill` is replaced by an in-memory stand-in here; the
 * real browser path is tests/lab/test_fairness_testbed.py (both sides' first packets on the wire). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const opened: { url: string; at: number }[] = [];
const updated: ((id: number, info: { status?: string }) => void)[] = [];
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
      onUpdated: { addListener: (f: (id: number, info: { status?: string }) => void) => { updated.push(f); } },
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
    updated.length = 0;
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

  it("a standby browser attaches, then holds its first URL until the host's go", async () => {
    const attached: number[] = [];
    const run = new LabRunner((tab) => { attached.push(tab); return Promise.resolve(); });
    const started = run.start(["https://a.test/"], "ack", null, Date.now, true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attached).toEqual([7]);
    expect(opened).toEqual([]);
    run.go(null);
    await started;
    expect(opened).toEqual([{ url: "https://a.test/", at: T0 + 10_000 }]);
  });

  it("a go that came before the attach is kept; its start time is waited for", async () => {
    const run = new LabRunner(attachNothing);
    run.go(T0 + 700);
    run.go(null); // a second go (a host restarted) changes nothing
    const started = run.start(["https://a.test/"], "ack", null, Date.now, true);
    await vi.advanceTimersByTimeAsync(699);
    expect(opened).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await started;
    expect(opened.map((o) => o.at)).toEqual([T0 + 700]);
  });

  it("says lab_loaded once, when the last URL's tab has loaded (not the first of a warm pair)", async () => {
    const sent: unknown[] = [];
    const run = new LabRunner(attachNothing, (m) => { sent.push(m); return true; });
    await run.start(["https://a.test/", "https://a.test/"], "ack", null);
    const status = (s: string, id = 7): void => { for (const f of updated) f(id, { status: s }); };
    status("loading");
    status("complete");
    expect(sent).toEqual([]);
    run.onRecord(7, { id: "r1" } as never);
    await run.onAck("r1");
    expect(opened).toHaveLength(2);
    status("complete"); // the first page's, late: not this one's load
    status("loading", 8);
    status("complete", 8); // another tab
    expect(sent).toEqual([]);
    status("loading");
    status("complete");
    status("complete");
    expect(sent).toEqual([{ type: "lab_loaded", schema: 1 }]);
  });
});
