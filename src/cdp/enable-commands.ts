/**
 * The commands that switch on the events the recorder needs, in order. Shared by the extension's
 * debugger adapter and scripts/record-fixtures.ts so fixtures hold exactly what chrome.debugger
 * delivers. Listeners must be in place before these are sent (Lighthouse's rule: events emitted
 * during Network.enable are otherwise lost).
 */
import type { Protocol } from "devtools-protocol";
import type { Command, RawEvent } from "./raw-event.ts";

/**
 * LCP. chrome.debugger does not expose the PerformanceTimeline domain ("'PerformanceTimeline.enable'
 * wasn't found", Chromium 156), so each top-level document gets a PerformanceObserver for
 * `largest-contentful-paint` (https://w3c.github.io/largest-contentful-paint/) that reports every
 * candidate through a CDP binding, as Runtime.bindingCalled events the recorder replays. Both live
 * in an isolated world: the page can neither see the binding nor forge a candidate. The payload is
 * the candidate's time in epoch ms (performance.timeOrigin + startTime).
 */
export const LCP_BINDING = "__protolensLcp";
export const LCP_WORLD = "protolens";
export const LCP_SCRIPT = `if (window === window.top) {
  const report = globalThis[${JSON.stringify(LCP_BINDING)}];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) report(JSON.stringify({ t: performance.timeOrigin + e.startTime }));
  }).observe({ type: "largest-contentful-paint", buffered: true });
}`;

/** For the tab's own target. */
export const TAB_COMMANDS: readonly Command[] = [
  { method: "Network.enable", params: {} },
  { method: "Page.enable", params: {} },
  { method: "Page.setLifecycleEventsEnabled", params: { enabled: true } },
  { method: "Performance.enable", params: { timeDomain: "timeTicks" } },
  // Largest-contentful-paint candidates (see LCP_SCRIPT). Runtime.bindingCalled is only sent
  // with the Runtime domain enabled (verified, Chromium 156); binding first, then the script.
  { method: "Runtime.enable" },
  { method: "Runtime.addBinding", params: { name: LCP_BINDING, executionContextName: LCP_WORLD } },
  { method: "Page.addScriptToEvaluateOnNewDocument", params: { source: LCP_SCRIPT, worldName: LCP_WORLD } },
  // Out-of-process iframes: pause each new child until its domains are on, then resume it
  // (chrome.debugger can address child sessions via {tabId, sessionId} since Chrome 125).
  {
    method: "Target.setAutoAttach",
    params: { autoAttach: true, waitForDebuggerOnStart: true, flatten: true },
  },
];

/** For each auto-attached child session (OOPIF): its domains, then the resume. The child stays
 * paused (waitForDebuggerOnStart) until CHILD_RESUME, so each round trip before it delays the
 * frame, and with it the page's load event: the adapter sends CHILD_ENABLE at once (sendAll). */
export const CHILD_ENABLE: readonly Command[] = [
  { method: "Network.enable", params: {} },
  { method: "Page.enable", params: {} },
  {
    method: "Target.setAutoAttach",
    params: { autoAttach: true, waitForDebuggerOnStart: true, flatten: true },
  },
];
export const CHILD_RESUME: Command = { method: "Runtime.runIfWaitingForDebugger" };
export const CHILD_COMMANDS: readonly Command[] = [...CHILD_ENABLE, CHILD_RESUME];

/** How sendAll retries a command that failed. */
export interface Retry {
  /** Tries per command, the first included. */
  attempts: number;
  /** Waits before try `attempt + 1` (the adapter: 20 ms x attempt). */
  pause: (attempt: number) => Promise<void>;
  /** True when retrying is pointless (the tab is gone). */
  stop: () => boolean;
}

export interface Failure { command: Command; error: unknown }

/**
 * Sends `commands` on one session without waiting for each reply, then retries each that failed,
 * in order. Chromium's DevToolsSession (content/browser/devtools/devtools_session.cc) handles a
 * session's messages in the order they arrive and queues the renderer's share to it in that
 * order, so sending them together keeps their order and costs one round trip through the
 * extension IPC instead of one per command. Resolves, after every reply, to the commands that
 * failed every try.
 */
export async function sendAll(send: (c: Command) => Promise<unknown>, commands: readonly Command[],
  retry: Retry): Promise<Failure[]> {
  const first = await Promise.allSettled(commands.map((c) => send(c)));
  const failures: Failure[] = [];
  for (const [i, res] of first.entries()) {
    const command = commands[i];
    if (res.status === "fulfilled" || command === undefined) continue;
    let error: unknown = res.reason;
    for (let attempt = 1; ; attempt++) {
      if (attempt >= retry.attempts || retry.stop()) {
        failures.push({ command, error });
        break;
      }
      await retry.pause(attempt);
      try {
        await send(command);
        break;
      } catch (e) {
        error = e;
      }
    }
  }
  return failures;
}

/** A child session's setup: CHILD_ENABLE in one batch, then CHILD_RESUME once every enable has
 * replied (a frame resumed before its Network.enable took effect would lose its first requests),
 * and whatever failed (a frame left paused would hang the page). Two round trips in all. */
export async function enableAndResume(send: (c: Command) => Promise<unknown>, retry: Retry): Promise<Failure[]> {
  const failed = await sendAll(send, CHILD_ENABLE, retry);
  return [...failed, ...await sendAll(send, [CHILD_RESUME], retry)];
}

/**
 * After the main frame's load event the adapter sends Performance.getMetrics and feeds the result
 * to the recorder as this Performance.metrics event. Its NavigationStart (= the page's
 * performance.timeOrigin, CDP monotonic seconds) is the zero of every time in the record, so
 * milestones.load_ms equals the page's own loadEventEnd: the main document's requestWillBeSent
 * comes later, by the page's fetchStart (measured 0.7-5.7 ms on Chromium 156).
 */
export const LOAD_METRICS_TITLE = "protolens:load";

export function loadMetricsEvent(metrics: Protocol.Performance.Metric[]): RawEvent {
  return { method: "Performance.metrics", params: { title: LOAD_METRICS_TITLE, metrics } };
}
