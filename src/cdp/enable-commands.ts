/**
 * The commands that switch on the events the recorder needs, in order. Shared by the extension's
 * debugger adapter and scripts/record-fixtures.ts so fixtures hold exactly what chrome.debugger
 * delivers. Listeners must be in place before these are sent (Lighthouse's rule: events emitted
 * during Network.enable are otherwise lost).
 */
import type { Protocol } from "devtools-protocol";
import type { Command, CommandParams, RawEvent } from "./raw-event.ts";

/**
 * LCP. chrome.debugger does not expose the PerformanceTimeline domain ("'PerformanceTimeline.enable'
 * wasn't found", Chromium 156), so each top-level document gets a PerformanceObserver for
 * `largest-contentful-paint` (https://w3c.github.io/largest-contentful-paint/) that reports every
 * candidate through a CDP binding, as Runtime.bindingCalled events the recorder replays. Both live
 * in an isolated world: the page can neither see the binding nor forge a candidate. The payload is
 * the candidate's time in epoch ms (performance.timeOrigin + startTime).
 *
 * The same script says when the page has a service worker that did not control its load: a
 * registration for the document that has a worker installing or waiting, or one that did not
 * handle the navigation (its Navigation Timing `workerStart` is 0), which means the worker was
 * registered during this load (a registration that covers a URL controls its navigations once
 * active: W3C Service Workers, "Handle Fetch"; one that calls `clients.claim()` controls the page
 * soon after, so the controller alone does not tell).
 * Its script and precache are fetched on the worker's own target, which chrome.debugger cannot
 * enable (its session takes no command: AUTO_ATTACH), so the record declares them not seen.
 * Checked at the load event and 0.1, 0.25, 0.45, 1 and 1.8 s later (a page that registers from
 * its own load handler; everyday records wait 2 s of quiet, the lab's 0.5 s); reported once,
 * payload `{"sw": true}`. (`navigator.serviceWorker.ready` throws NotSupportedError outside the
 * main world, Chromium 156; `getRegistration()` answers there.)
 *
 * And when the page was hidden (a tab opened in the background, as a middle click opens a link, or
 * one the user left during the load): each `visibility-state` entry named "hidden" (W3C Page
 * Visibility; Chromium 156 buffers them from the navigation's start, the first at `startTime` 0 for
 * a page that began hidden), payload `{"hidden": epoch ms, "at": startTime}`. A hidden page paints
 * nothing: its first paint waits until it is shown (a background tab shown 3 s after its start:
 * first-contentful-paint at 3,044 ms for a page that loaded in 128), so a paint after the page was
 * hidden times the user, not the page (handlers/runtime.ts).
 */
export const LCP_BINDING = "__protolensLcp";
export const LCP_WORLD = "protolens";
export const LCP_SCRIPT = `if (window === window.top) {
  const report = globalThis[${JSON.stringify(LCP_BINDING)}];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) report(JSON.stringify({ t: performance.timeOrigin + e.startTime }));
  }).observe({ type: "largest-contentful-paint", buffered: true });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === "hidden") report(JSON.stringify({ hidden: performance.timeOrigin + e.startTime, at: e.startTime }));
      }
    }).observe({ type: "visibility-state", buffered: true });
  } catch (e) { /* a browser without visibility-state entries */ }
  const sw = navigator.serviceWorker;
  let told = false;
  const tell = () => { if (!told) report(JSON.stringify({ sw: told = true })); };
  const nav = performance.getEntriesByType("navigation")[0];
  const check = () => sw.getRegistration().then((r) => {
    if (r && (r.installing || r.waiting || (nav ? nav.workerStart === 0 : !sw.controller))) tell();
  }).catch(() => undefined);
  if (sw) {
    const checks = () => { for (const ms of [0, 100, 250, 450, 1000, 1800]) setTimeout(check, ms); };
    // run after the load event when the document was joined late (src/cdp/session.ts)
    if (document.readyState === "complete") checks(); else addEventListener("load", checks);
  }
}`;

/**
 * Which targets auto-attach pauses until their domains are on: out-of-process iframes and
 * dedicated workers, whose requests are the page's. Not a service worker or a shared worker:
 * chrome.debugger accepts no command on their sessions, so one paused at its start was never
 * resumed, and `navigator.serviceWorker.register()` did not settle for 30-45 s while a tab was
 * recorded (Chromium 156, the real-web test site). Their fetches are not seen (docs/RECORD.md,
 * "What DevTools cannot see"). The filter's first match wins; its default excludes browser and
 * tab targets (CDP Target.TargetFilter).
 */
export const AUTO_ATTACH = {
  autoAttach: true, waitForDebuggerOnStart: true, flatten: true,
  filter: [
    { type: "browser", exclude: true }, { type: "tab", exclude: true },
    { type: "service_worker", exclude: true }, { type: "shared_worker", exclude: true }, {},
  ],
} as const satisfies CommandParams<"Target.setAutoAttach">;

/** For the tab's own target. Target.setAutoAttach comes second: a child created before it is
 * attached already running (`waitingForDebugger` false), and its requests until its own
 * Network.enable are not seen. An everyday browser attaches at each navigation, when a fast
 * page's frames may be loading already: with it last (90 ms into the enable on this machine), the
 * real-web /frame/'s b.test frame lost its stylesheet in CI run 39, and 4 loads of 7 by hand lost
 * one of its requests or its nested c.test frame's. */
export const TAB_COMMANDS: readonly Command[] = [
  { method: "Network.enable", params: {} },
  // Out-of-process iframes and dedicated workers: pause each new child until its domains are
  // on, then resume it (chrome.debugger can address child sessions via {tabId, sessionId} since
  // Chrome 125).
  { method: "Target.setAutoAttach", params: AUTO_ATTACH },
  { method: "Page.enable", params: {} },
  { method: "Page.setLifecycleEventsEnabled", params: { enabled: true } },
  { method: "Performance.enable", params: { timeDomain: "timeTicks" } },
  // Largest-contentful-paint candidates (see LCP_SCRIPT). Runtime.bindingCalled is only sent
  // with the Runtime domain enabled (verified, Chromium 156); binding first, then the script.
  { method: "Runtime.enable" },
  { method: "Runtime.addBinding", params: { name: LCP_BINDING, executionContextName: LCP_WORLD } },
  { method: "Page.addScriptToEvaluateOnNewDocument", params: { source: LCP_SCRIPT, worldName: LCP_WORLD } },
];

/**
 * Commands the recorder is better for but can do without: a refusal changes nothing else.
 * ServiceWorker.enable reports the page's service workers (registrations and their versions'
 * lifecycle): a worker installing during a load fetches its script and its precache on its own
 * target, which the tab's session is not attached to (AUTO_ATTACH), so the record can say so
 * (docs/RECORD.md "What DevTools cannot see"). Through chrome.debugger Chromium 156 refuses it
 * ("'ServiceWorker.enable' wasn't found", -32601: the domain is not exposed to extensions, checked
 * 2026-11-28); the recorder reads its events where a log has them (replayed CDP logs).
 */
export const OPTIONAL_COMMANDS: readonly Command[] = [{ method: "ServiceWorker.enable" }];

/**
 * Paint progress for the visual metrics (src/visual/), only when they are asked for: the tab's
 * screencast, every frame Chromium shows, acknowledged and decoded by the session core
 * (src/cdp/session.ts). Chosen over trace screenshots because through chrome.debugger a
 * `disabled-by-default-devtools.screenshot` trace holds no Screenshot event (Chromium 156: 204
 * renderer events, 0 screenshots) and tracing is one per browser ("Tracing has already been
 * started (possibly in another tab)"); measured in docs/ARCHITECTURE.md "Visual metrics".
 * Frames at most 800 px wide or high (the headless viewport, 780 x 437, at full size): progress
 * is a share of the histogram, and the edges that JPEG and scaling blur cost the four-block
 * page of scripts/devkit/visual_site.py 1% per block at 500 px (23/48/73%, q80), a little less
 * at full size (24/49/74%; PNG 24/50/75%).
 */
export const SCREENCAST: Command = {
  method: "Page.startScreencast",
  params: { format: "jpeg", quality: 80, maxWidth: 800, maxHeight: 800, everyNthFrame: 1 },
};

/** For each auto-attached child session (OOPIF), before Runtime.runIfWaitingForDebugger; its own
 * auto-attach second, as the tab's (a frame in a frame created meanwhile is paused). */
export const CHILD_COMMANDS: readonly Command[] = [
  { method: "Network.enable", params: {} },
  { method: "Target.setAutoAttach", params: AUTO_ATTACH },
  { method: "Page.enable", params: {} },
  { method: "Runtime.runIfWaitingForDebugger" },
];

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
