/**
 * Adapter: runs the worker core's effects (src/worker/events.ts Effect), one named runner per
 * effect type, each a few lines of chrome.* / browser.* I/O. Outcomes go back to the core as
 * events through `dispatch`.
 */
import browser from "webextension-polyfill";
import type { DebuggerRecorder } from "./debugger.ts";
import { networkInfo } from "./environment.ts";
import type { HostLink } from "./host-port.ts";
import type { LabRunner } from "./lab-runner.ts";
import type { OutboxStore } from "./outbox-store.ts";
import { saveExperiment } from "./experiment-store.ts";
import { savePause } from "./pause-store.ts";
import { applyProxy } from "./proxy.ts";
import type { Throttler } from "./throttle.ts";
import { showPause, showRecord } from "./tab-view.ts";
import type { BrowserInfo } from "../record/types.ts";
import type { Effect, TabInfo, WorkerEvent } from "../worker/events.ts";

export type Dispatch = (ev: WorkerEvent) => Promise<void>;

export interface EffectDeps {
  dbg: DebuggerRecorder;
  link: HostLink;
  outbox: OutboxStore;
  throttler: Throttler;
  labRunner: LabRunner;
  browserEnv: BrowserInfo;
  dispatch: Dispatch;
}

type Runners = { readonly [T in Effect["type"]]: (e: Extract<Effect, { type: T }>) => Promise<void> | void };

export function effectRunners(d: EffectDeps): Runners {
  return {
    attach: async (e) => {
      try {
        await d.dbg.attach(e.tabId, {
          source: e.source, urlDetail: e.urlDetail, visual: e.visual, newId: () => crypto.randomUUID(),
          ...(e.soft === null ? {} : { softAttach: e.soft }),
          ...(e.quietMs === null ? {} : { limits: { quietMs: e.quietMs } }),
          env: { browser: d.browserEnv, extension_version: chrome.runtime.getManifest().version, network: networkInfo() },
        }, e.committed, e.saveLog);
      } catch (err) {
        await d.dispatch({ type: "attach_failed", tabId: e.tabId });
        throw err;
      }
      await d.dispatch({ type: "attached", tabId: e.tabId });
      await d.throttler.apply(e.tabId).catch((err: unknown) => console.warn("protolens: throttling", err));
    },
    join_commit: (e) => d.dbg.joinCommit(e.tabId),
    expect_commits: (e) => d.dbg.expectCommits(e.tabId, e.commits),
    detach: (e) => d.dbg.detach(e.tabId),
    query_tabs: async () => {
      const tabs = (await browser.tabs.query({})).flatMap((t): TabInfo[] =>
        t.id === undefined ? [] : [{ tabId: t.id, url: t.url ?? "", incognito: t.incognito }]);
      await d.dispatch({ type: "tabs", tabs });
    },
    send: async (e) => {
      if (!d.link.send(e.msg) && e.msg.type === "record") await d.dispatch({ type: "send_failed", msgId: e.msg.msg_id });
    },
    save_outbox: async (e) => { await d.outbox.update(() => e.outbox); },
    save_experiment: (e) => saveExperiment(e.experiment),
    save_pause: (e) => savePause(e.pause),
    save_host: (e) => browser.storage.session.set({ lab: e.lab, host_version: e.hostVersion }),
    apply_proxy: async (e) => {
      const pac = await applyProxy(e.rules, e.relay).catch((err: unknown) => {
        console.warn("protolens: proxy", err);
        return null;
      });
      await d.dispatch({ type: "proxy_applied", pac });
    },
    throttle: (e) => d.throttler.update(e.throttling, e.tabs),
    show_record: (e) => { void showRecord(e.tabId, e.record); },
    badge: (e) => showPause(e.paused, e.until),
    timer: (e) => { setTimeout(() => void d.dispatch(e.event), e.ms); },
    open_welcome: async () => { await browser.tabs.create({ url: chrome.runtime.getURL("welcome.html") }); },
    lab_start: (e) => {
      void d.labRunner.start(e.navigate, e.advance, e.startAtMs, Date.now, e.hold).catch((err: unknown) => console.error("protolens: lab", err));
    },
    lab_go: (e) => d.labRunner.go(e.startAtMs),
    lab_record: (e) => d.labRunner.onRecord(e.tabId, e.record),
    lab_queued: (e) => d.labRunner.onQueued(e.record),
    lab_ack: (e) => d.labRunner.onAck(e.id),
  };
}

/** Runs one effect with its runner; a runner that throws rejects. */
export async function runEffect(runners: Runners, e: Effect): Promise<void> {
  await (runners[e.type] as (x: Effect) => Promise<void> | void)(e);
}
