/**
 * The service worker: a thin adapter over the worker core (src/worker/core.ts), which makes every
 * decision. It turns chrome.* events into WorkerEvents, steps the core with the wall clock, and
 * runs the effects in order (src/adapters/effects.ts), feeding their outcomes back as events. Recording is off until the
 * user opts in (options page) or the host's hello reply carries `lab` (docs/MESSAGES.md); web
 * pages have no way in. State that must survive a worker restart lives in chrome.storage
 * (outbox, settings, enrolment, pause).
 */
import browser from "webextension-polyfill";
import { DebuggerRecorder } from "./debugger.ts";
import { effectRunners, runEffect, type Dispatch } from "./effects.ts";
import { browserInfo } from "./environment.ts";
import { HostLink } from "./host-port.ts";
import { LabRunner } from "./lab-runner.ts";
import { LogSender } from "./log-sender.ts";
import { OutboxStore } from "./outbox-store.ts";
import { loadExperiment, onExperimentChanged } from "./experiment-store.ts";
import { loadPause, onPauseChanged } from "./pause-store.ts";
import { installAuthListener } from "./proxy.ts";
import { Throttler } from "./throttle.ts";
import { loadSettings, onSettingsChanged } from "./settings-store.ts";
import { forgetTab } from "./tab-view.ts";
import { initialState, step } from "../worker/core.ts";
import type { TabInfo, WorkerEvent } from "../worker/events.ts";

async function main(): Promise<Dispatch> {
  const outbox = await OutboxStore.load();
  let state = initialState(await loadSettings(), await loadExperiment(), await loadPause(), outbox.state);
  const browserEnv = await browserInfo();
  const throttler = new Throttler();

  const dispatch: Dispatch = async (ev) => {
    const next = step(state, ev, Date.now());
    state = next.state;
    for (const e of next.effects) {
      await runEffect(runners, e).catch((err: unknown) => console.warn(`protolens: ${e.type}`, err));
    }
  };
  const logs = new LogSender((m) => link.send(m));
  const dbg = new DebuggerRecorder((tabId, record, busy) => {
    const applied = throttler.take(tabId, record.requests.map((r) => r.request_id));
    void dispatch({ type: "record", tabId, record, applied, installed: new Set(throttler.installed), busy });
  }, (log, options) => void logs.add(log, options).catch((err: unknown) => console.warn("protolens: log tap", err)));
  const link = new HostLink((m) => {
    if (m.type === "ack") logs.onAck(m.id);
    if (m.type === "policies" && m.error !== null) console.warn(`protolens: policies: ${m.error}`);
    if (m.type === "error") console.warn(`protolens: host error: ${m.error}`);
    void dispatch({ type: "host", msg: m });
  }, () => void dispatch({ type: "host_down" }));
  const labRunner = new LabRunner((tabId) => dispatch({ type: "lab_tab", tabId }), (m) => link.send(m));
  const runners = effectRunners({ dbg, link, outbox, throttler, labRunner, browserEnv, dispatch });

  onSettingsChanged((settings) => void dispatch({ type: "settings", settings }));
  onExperimentChanged((experiment) => void dispatch({ type: "experiment", experiment }));
  onPauseChanged((pause) => void dispatch({ type: "pause", pause }));
  chrome.debugger.onDetach.addListener((source) => {
    if (source.tabId !== undefined) void dispatch({ type: "detached", tabId: source.tabId });
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    throttler.forget(tabId);
    void dispatch({ type: "removed", tabId });
  });
  await dispatch({ type: "start" });
  link.connect();
  return dispatch;
}

/** The tab behind a webNavigation event, for its incognito flag (null: gone already). */
async function tabOf(d: chrome.webNavigation.WebNavigationBaseCallbackDetails & { url: string }): Promise<TabInfo | null> {
  if (d.frameId !== 0) return null;
  const tab = await browser.tabs.get(d.tabId).catch(() => null);
  return tab === null ? null : { tabId: d.tabId, url: d.url, incognito: tab.incognito };
}

// Listeners at the top level, so an event that wakes the worker is delivered (MV3 rule).
installAuthListener();
const app = main();
app.catch((e: unknown) => console.error("protolens: startup failed", e));
const send = (ev: Promise<WorkerEvent | null>): void => void Promise.all([app, ev]).then(([d, e]) => e === null ? undefined : d(e));
chrome.webNavigation.onBeforeNavigate.addListener((d) => send(tabOf(d).then((tab) => tab && { type: "before_navigate", tab, at: d.timeStamp })));
chrome.webNavigation.onCommitted.addListener((d) => {
  // a prerender's document, committed in a frame of its own (frame id not 0): its activation is
  // a later top-level commit of the same document (src/cdp/missed.ts)
  if (d.documentLifecycle === "prerender" && d.frameType === "outermost_frame") {
    send(Promise.resolve({ type: "prerendered", tabId: d.tabId, documentId: d.documentId }));
  }
  send(tabOf(d).then((tab) => tab && {
    type: "committed", tab, at: d.timeStamp, backForward: d.transitionQualifiers.includes("forward_back"), documentId: d.documentId,
  }));
});
chrome.webNavigation.onHistoryStateUpdated.addListener((d) => send(tabOf(d).then((tab) => tab && { type: "history_state", tab })));
chrome.tabs.onCreated.addListener((t) => send(Promise.resolve(t.id === undefined ? null : {
  type: "created", tab: { tabId: t.id, url: t.pendingUrl ?? t.url ?? "", incognito: t.incognito },
})));
chrome.tabs.onRemoved.addListener((tabId) => void forgetTab(tabId));
chrome.runtime.onInstalled.addListener((d) => {
  if (d.reason === "install") send(Promise.resolve({ type: "installed" }));
});
