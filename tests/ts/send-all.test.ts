/** Batched enable commands (src/cdp/enable-commands.ts): sent without waiting for each reply,
 * failures retried in order, and a paused child resumed only after its enables, but always. */
import { describe, expect, it } from "vitest";
import {
  CHILD_COMMANDS, CHILD_ENABLE, CHILD_RESUME, enableAndResume, sendAll, type Retry,
} from "../../src/cdp/enable-commands.ts";
import type { Command } from "../../src/cdp/raw-event.ts";

/** A session whose replies come only when the test releases them; `fails` counts, per method,
 * how many more tries of it will fail. */
function session(fails: Record<string, number> = {}) {
  const sent: string[] = [];
  const pending: (() => void)[] = [];
  const send = (c: Command): Promise<unknown> => {
    sent.push(c.method);
    const left = fails[c.method] ?? 0;
    if (left > 0) fails[c.method] = left - 1;
    return new Promise((resolve, reject) => {
      pending.push(() => (left > 0 ? reject(new Error(`${c.method} failed`)) : resolve({})));
    });
  };
  /** Answers every command sent so far, then lets the awaiting code run. */
  const reply = async (): Promise<void> => {
    for (const answer of pending.splice(0)) answer();
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { sent, send, reply, pending };
}

const retry = (over: Partial<Retry> = {}): Retry => ({
  attempts: 3, pause: () => Promise.resolve(), stop: () => false, ...over,
});

/** Drives `run` to the end, answering whatever is pending each round. */
async function drive<T>(s: ReturnType<typeof session>, run: Promise<T>): Promise<T> {
  let done = false;
  const out = run.finally(() => { done = true; });
  for (let i = 0; i < 50 && !done; i++) await s.reply();
  return out;
}

describe("sendAll", () => {
  it("sends every command before any reply, in order", async () => {
    const s = session();
    const run = sendAll(s.send, CHILD_ENABLE, retry());
    expect(s.sent).toEqual(CHILD_ENABLE.map((c) => c.method));
    expect(s.pending).toHaveLength(CHILD_ENABLE.length);
    expect(await drive(s, run)).toEqual([]);
    expect(s.sent).toHaveLength(CHILD_ENABLE.length);
  });

  it("retries a failed command until it succeeds", async () => {
    const s = session({ "Page.enable": 2 });
    const pauses: number[] = [];
    const failures = await drive(s, sendAll(s.send, CHILD_ENABLE, retry({
      pause: (a) => { pauses.push(a); return Promise.resolve(); },
    })));
    expect(failures).toEqual([]);
    expect(s.sent.filter((m) => m === "Page.enable")).toHaveLength(3);
    expect(pauses).toEqual([1, 2]);
  });

  it("gives up after `attempts` tries and reports the last error", async () => {
    const s = session({ "Network.enable": 5 });
    const failures = await drive(s, sendAll(s.send, CHILD_ENABLE, retry()));
    expect(failures.map((f) => f.command.method)).toEqual(["Network.enable"]);
    expect(String(failures[0]?.error)).toContain("Network.enable failed");
    expect(s.sent.filter((m) => m === "Network.enable")).toHaveLength(3);
  });

  it("does not retry once told to stop", async () => {
    const s = session({ "Network.enable": 5, "Page.enable": 5 });
    const failures = await drive(s, sendAll(s.send, CHILD_ENABLE, retry({ stop: () => true })));
    expect(failures.map((f) => f.command.method)).toEqual(["Network.enable", "Page.enable"]);
    expect(s.sent).toEqual(CHILD_ENABLE.map((c) => c.method));
  });
});

describe("enableAndResume", () => {
  it("resumes only after every enable has replied, in two round trips", async () => {
    const s = session();
    const run = enableAndResume(s.send, retry());
    expect(s.sent).toEqual(CHILD_ENABLE.map((c) => c.method));
    await s.reply();
    expect(s.sent).toEqual(CHILD_COMMANDS.map((c) => c.method));
    expect(await drive(s, run)).toEqual([]);
  });

  it("retries a failed enable before resuming", async () => {
    const s = session({ "Network.enable": 1 });
    await drive(s, enableAndResume(s.send, retry()));
    expect(s.sent.slice(CHILD_ENABLE.length)).toEqual(["Network.enable", CHILD_RESUME.method]);
  });

  it("resumes the child even when an enable fails for good", async () => {
    const s = session({ "Target.setAutoAttach": 9 });
    const failures = await drive(s, enableAndResume(s.send, retry()));
    expect(failures.map((f) => f.command.method)).toEqual(["Target.setAutoAttach"]);
    expect(s.sent.at(-1)).toBe(CHILD_RESUME.method);
  });

  it("retries the resume itself", async () => {
    const s = session({ [CHILD_RESUME.method]: 1 });
    expect(await drive(s, enableAndResume(s.send, retry()))).toEqual([]);
    expect(s.sent.filter((m) => m === CHILD_RESUME.method)).toHaveLength(2);
  });
});
