/**
 * The service worker: wires the adapters. Recording is off until the user opts in (options page)
 * or the host's hello reply carries `lab` (docs/MESSAGES.md); web pages have no way in.
 * State that must survive a worker restart lives in chrome.storage (outbox, settings).
 */
import browser from "webextension-polyfill";
import { DebuggerRecorder } from "./debugger.ts";
import { browserInfo, networkInfo } from "./environment.ts";
import { HostLink } from "./host-port.ts";
import { LabRunner } from "./lab-runner.ts";
import { OutboxStore } from "./outbox-store.ts";
import { loadSettings, onSettingsChanged } from "./settings-store.ts";
import { forgetTab, showRecord } from "./tab-view.ts";
import { MSG_SCHEMA, dispatchHost, type HostHandlers, type LabConfig } from "../messages/protocol.ts";
import { ack, enqueue, reject } from "../outbox/outbox.ts";
import { effective, inScope, type Settings } from "../policy/settings.ts";
import type { NavigationRecord } from "../record/types.ts";

const RETRY_MS = 2000;

interface App {
  onBeforeNavigate(d: chrome.webNavigation.WebNavigationBaseCallbackDetails): Promise<void>;
}

async function main(): Promise<App> {
  let settings: Settings = await loadSettings();
  let lab: LabConfig | null = null;
  const outbox = await OutboxStore.load();
  const browserEnv = await browserInfo();
  const inflight = new Set<string>();

  const recorderOptions = () => {
    const e = effective(settings, lab);
    return {
      source: e.source, urlDetail: e.urlDetail, newId: () => crypto.randomUUID(),
      env: { browser: browserEnv, extension_version: chrome.runtime.getManifest().version, network: networkInfo() },
    };
  };

  const flush = (): void => {
    if (!link.ready) return;
    for (const item of outbox.state.items) {
      if (inflight.has(item.msgId)) continue;
      if (link.send({ type: "record", schema: MSG_SCHEMA, msg_id: item.msgId, record: item.record })) inflight.add(item.msgId);
    }
  };

  const onRecord = (tabId: number, record: NavigationRecord): void => {
    labRunner.onRecord(tabId, record);
    void outbox.update((s) => enqueue(s, record)).then(async () => {
      flush();
      await labRunner.onQueued(record);
    });
    void showRecord(tabId, record);
  };

  const dbg = new DebuggerRecorder(onRecord);
  const labRunner = new LabRunner((tabId) => dbg.attach(tabId, recorderOptions()));

  const handlers = {
    hello: (m) => {
      lab = m.lab;
      void browser.storage.session.set({ lab: m.lab, host_version: m.host_version });
      flush();
      if (lab?.record) void labRunner.start(lab.navigate, lab.advance).catch((e: unknown) => console.error("protolens: lab", e));
    },
    ack: async (m) => {
      inflight.delete(m.msg_id);
      await outbox.update((s) => ack(s, m.msg_id));
      await labRunner.onAck(m.id);
    },
    pong: () => undefined,
    query_result: () => undefined, // only the dashboard's own port sends queries
    error: async (m) => {
      console.warn(`protolens: host error: ${m.error}`);
      if (m.msg_id === null) return;
      await outbox.update((s) => reject(s, m.msg_id ?? "", m.retry));
      const id = m.msg_id;
      if (m.retry) setTimeout(() => { inflight.delete(id); flush(); }, RETRY_MS);
      else inflight.delete(id);
    },
  } satisfies HostHandlers;

  const link = new HostLink((m) => void dispatchHost(handlers, m), () => inflight.clear());

  // Attach to every in-scope tab ahead of its next navigation (attaching at onBeforeNavigate can
  // be too late for that navigation's first request); detach from the rest.
  const syncTabs = async (): Promise<void> => {
    const e = effective(settings, lab);
    for (const tab of await browser.tabs.query({})) {
      if (tab.id === undefined || tab.id === labRunner.labTab) continue;
      const want = inScope(e, tab.url ?? "", tab.incognito);
      if (want && !dbg.isAttached(tab.id)) await dbg.attach(tab.id, recorderOptions()).catch(() => undefined);
      else if (!want && dbg.isAttached(tab.id)) await dbg.detach(tab.id);
    }
  };
  onSettingsChanged((s) => {
    settings = s;
    void syncTabs();
  });
  void syncTabs();
  link.connect();
  return {
    // Passive recording: attach before each top-level navigation of an in-scope tab.
    async onBeforeNavigate(d) {
      if (d.frameId !== 0) return;
      const tab = await browser.tabs.get(d.tabId).catch(() => null);
      if (tab === null) return;
      const want = inScope(effective(settings, lab), d.url, tab.incognito);
      if (want && !dbg.isAttached(d.tabId)) await dbg.attach(d.tabId, recorderOptions()).catch(() => undefined);
      else if (!want && dbg.isAttached(d.tabId) && d.tabId !== labRunner.labTab) await dbg.detach(d.tabId);
    },
  };
}

// Listeners at the top level, so an event that wakes the worker is delivered (MV3 rule).
const app = main();
app.catch((e: unknown) => console.error("protolens: startup failed", e));
chrome.webNavigation.onBeforeNavigate.addListener((d) => void app.then((a) => a.onBeforeNavigate(d)));
chrome.tabs.onRemoved.addListener((tabId) => void forgetTab(tabId));
