/**
 * The service worker: a thin adapter over the worker core (src/worker/core.ts), which makes every
 * decision. It turns chrome.* events into WorkerEvents, steps the core with the wall clock, and
 * runs the effects in order, feeding their outcomes back as events. Recording is off until the
 * user opts in (options page) or the host's hello reply carries `lab` (docs/MESSAGES.md); web
 * pages have no way in. State that must survive a worker restart lives in chrome.storage
 * (outbox, settings, enrolment, pause).
 */
import browser from "webextension-polyfill";
import { DebuggerRecorder } from "./debugger.ts";
import { browserInfo, networkInfo } from "./environment.ts";
import { HostLink } from "./host-port.ts";
import { LabRunner } from "./lab-runner.ts";
import { OutboxStore } from "./outbox-store.ts";
import { loadExperiment, onExperimentChanged, saveExperiment } from "./experiment-store.ts";
import { loadPause, onPauseChanged, savePause } from "./pause-store.ts";
import { applyProxy, installAuthListener } from "./proxy.ts";
import { Throttler } from "./throttle.ts";
import { loadSettings, onSettingsChanged } from "./settings-store.ts";
import { forgetTab, showPause, showRecord } from "./tab-view.ts";
import { initialState, step } from "../worker/core.ts";
import type { Effect, TabInfo, WorkerEvent } from "../worker/events.ts";

type Dispatch = (ev: WorkerEvent) => Promise<void>;

async function main(): Promise<Dispatch> {
  const outbox = await OutboxStore.load();
  let state = initialState(await loadSettings(), await loadExperiment(), await loadPause(), outbox.state);
  const browserEnv = await browserInfo();
  const throttler = new Throttler();

  const dispatch: Dispatch = async (ev) => {
    const next = step(state, ev, Date.now());
    state = next.state;
    for (const e of next.effects) {
      await run(e).catch((err: unknown) => console.warn(`protolens: ${e.type}`, err));
    }
  };

  const dbg = new DebuggerRecorder((tabId, record, busy) => {
    const applied = throttler.take(tabId, record.requests.map((r) => r.request_id));
    void dispatch({ type: "record", tabId, record, applied, installed: new Set(throttler.installed), busy });
  });
  const labRunner = new LabRunner((tabId) => dispatch({ type: "lab_tab", tabId }));
  const link = new HostLink((m) => {
    if (m.type === "policies" && m.error !== null) console.warn(`protolens: policies: ${m.error}`);
    if (m.type === "error") console.warn(`protolens: host error: ${m.error}`);
    void dispatch({ type: "host", msg: m });
  }, () => void dispatch({ type: "host_down" }));

  const run = async (e: Effect): Promise<void> => {
    switch (e.type) {
      case "attach":
        try {
          await dbg.attach(e.tabId, {
            source: e.source, urlDetail: e.urlDetail, visual: e.visual, newId: () => crypto.randomUUID(),
            ...(e.quietMs === null ? {} : { limits: { quietMs: e.quietMs } }),
            env: { browser: browserEnv, extension_version: chrome.runtime.getManifest().version, network: networkInfo() },
          }, e.committed);
        } catch (err) {
          await dispatch({ type: "attach_failed", tabId: e.tabId });
          throw err;
        }
        await dispatch({ type: "attached", tabId: e.tabId });
        await throttler.apply(e.tabId).catch((err: unknown) => console.warn("protolens: throttling", err));
        return;
      case "join_commit":
        return dbg.joinCommit(e.tabId);
      case "detach":
        return dbg.detach(e.tabId);
      case "query_tabs": {
        const tabs = (await browser.tabs.query({})).flatMap((t): TabInfo[] =>
          t.id === undefined ? [] : [{ tabId: t.id, url: t.url ?? "", incognito: t.incognito }]);
        return dispatch({ type: "tabs", tabs });
      }
      case "send":
        if (!link.send(e.msg) && e.msg.type === "record") await dispatch({ type: "send_failed", msgId: e.msg.msg_id });
        return;
      case "save_outbox":
        await outbox.update(() => e.outbox);
        return;
      case "save_experiment":
        return saveExperiment(e.experiment);
      case "save_pause":
        return savePause(e.pause);
      case "save_host":
        return browser.storage.session.set({ lab: e.lab, host_version: e.hostVersion });
      case "apply_proxy": {
        const pac = await applyProxy(e.rules, e.relay).catch((err: unknown) => {
          console.warn("protolens: proxy", err);
          return null;
        });
        return dispatch({ type: "proxy_applied", pac });
      }
      case "throttle":
        return throttler.update(e.throttling, e.tabs);
      case "show_record":
        void showRecord(e.tabId, e.record);
        return;
      case "badge":
        return showPause(e.paused, e.until);
      case "timer":
        setTimeout(() => void dispatch(e.event), e.ms);
        return;
      case "open_welcome":
        await browser.tabs.create({ url: chrome.runtime.getURL("welcome.html") });
        return;
      case "lab_start":
        void labRunner.start(e.navigate, e.advance).catch((err: unknown) => console.error("protolens: lab", err));
        return;
      case "lab_record":
        labRunner.onRecord(e.tabId, e.record);
        return;
      case "lab_queued":
        return labRunner.onQueued(e.record);
      case "lab_ack":
        return labRunner.onAck(e.id);
    }
  };

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
chrome.webNavigation.onBeforeNavigate.addListener((d) => send(tabOf(d).then((tab) => tab && { type: "before_navigate", tab })));
chrome.webNavigation.onCommitted.addListener((d) => send(tabOf(d).then((tab) => tab && { type: "committed", tab })));
chrome.tabs.onCreated.addListener((t) => send(Promise.resolve(t.id === undefined ? null : {
  type: "created", tab: { tabId: t.id, url: t.pendingUrl ?? t.url ?? "", incognito: t.incognito },
})));
chrome.tabs.onRemoved.addListener((tabId) => void forgetTab(tabId));
chrome.runtime.onInstalled.addListener((d) => {
  if (d.reason === "install") send(Promise.resolve({ type: "installed" }));
});
