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
import { loadExperiment, onExperimentChanged, saveExperiment } from "./experiment-store.ts";
import { applyProxy, installAuthListener } from "./proxy.ts";
import { Throttler } from "./throttle.ts";
import { loadSettings, onSettingsChanged } from "./settings-store.ts";
import { forgetTab, showRecord } from "./tab-view.ts";
import { MSG_SCHEMA, dispatchHost, type HostHandlers, type LabConfig } from "../messages/protocol.ts";
import { ack, enqueue, reject } from "../outbox/outbox.ts";
import { effective, inScope, type Settings } from "../policy/settings.ts";
import { annotate, effectiveRules } from "../policy/applied.ts";
import { NO_POLICIES, throttling, type PolicySet } from "../policy/rules.ts";
import { advance, armsApplied, enrolledDomain, type ArmInEffect, type ExperimentState } from "../experiment/assign.ts";
import type { NavigationRecord } from "../record/types.ts";

const RETRY_MS = 2000;

interface App {
  onBeforeNavigate(d: chrome.webNavigation.WebNavigationBaseCallbackDetails): Promise<void>;
  onCreated(tab: chrome.tabs.Tab): Promise<void>;
  onCommitted(d: chrome.webNavigation.WebNavigationBaseCallbackDetails): Promise<void>;
}

async function main(): Promise<App> {
  let settings: Settings = await loadSettings();
  let lab: LabConfig | null = null;
  const outbox = await OutboxStore.load();
  const browserEnv = await browserInfo();
  const inflight = new Set<string>();
  // Everyday-browser policies (docs/POLICY.md): the host's rules + relay, the volunteer's A/B state.
  let policies: PolicySet = NO_POLICIES;
  let experiment: ExperimentState | null = await loadExperiment();
  // what the proxy settings apply to each enrolled domain, and since when (experiment/assign.ts)
  const inEffect = new Map<string, ArmInEffect>();
  let askedRelay = false;
  let onPoliciesApplied = (): void => undefined;
  const throttler = new Throttler();

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

  const onRecord = (tabId: number, raw: NavigationRecord): void => {
    const applied = throttler.take(tabId, raw.requests.map((r) => r.request_id));
    const { record, enrolled } = annotate(raw, policies, experiment, lab !== null, applied, throttler.installed, inEffect);
    // attached only for the experiment (recording off) but not an experiment load: not recorded
    if (record.source !== "experiment" && !inScope(effective(settings, lab), raw.page.origin, false)) return;
    if (enrolled !== null && experiment !== null) {
      // the next navigation to this domain gets the next arm of its block (experiment/assign.ts)
      experiment = advance(experiment, enrolled);
      void saveExperiment(experiment);
    }
    labRunner.onRecord(tabId, record);
    void outbox.update((s) => enqueue(s, record)).then(async () => {
      flush();
      await labRunner.onQueued(record);
    });
    void showRecord(tabId, record);
  };

  const dbg = new DebuggerRecorder(onRecord);
  const attach = async (tabId: number, committed = false): Promise<void> => {
    await dbg.attach(tabId, recorderOptions(), committed);
    await throttler.apply(tabId).catch((e: unknown) => console.warn("protolens: throttling", e));
  };
  const labRunner = new LabRunner(attach);

  // The PAC (no-h3 via the relay) and the CDP throttling rules follow the rules and enrolment.
  // One application at a time, so `inEffect` follows the order the settings were set in.
  let applying: Promise<void> = Promise.resolve();
  const applyPolicies = (): Promise<void> => (applying = applying.then(applyPoliciesNow, applyPoliciesNow));
  const applyPoliciesNow = async (): Promise<void> => {
    const exp = lab === null ? experiment : null;
    if (policies.relay === null && (exp?.domains.length ?? 0) > 0 && !askedRelay && link.ready) {
      askedRelay = link.send({ type: "policies", schema: MSG_SCHEMA, want_relay: true });
    }
    const rules = effectiveRules(policies.rules, exp);
    // a domain whose arm may change has no arm in effect until the new settings are set
    const before = armsApplied(exp, true);
    for (const d of inEffect.keys()) if (!before.has(d)) inEffect.delete(d);
    for (const [d, arm] of before) if (inEffect.get(d)?.arm !== arm) inEffect.set(d, { arm: null, since: Date.now() });
    const pac = await applyProxy(rules, policies.relay).catch((e: unknown) => {
      console.warn("protolens: proxy", e);
      return null;
    });
    if (pac !== null) {
      const now = Date.now();
      for (const [d, arm] of armsApplied(exp, pac)) if (inEffect.get(d)?.arm !== arm) inEffect.set(d, { arm, since: now });
    }
    const tabs = (await browser.tabs.query({})).flatMap((t) => (t.id !== undefined && dbg.isAttached(t.id) ? [t.id] : []));
    await throttler.update(throttling(rules), tabs);
  };
  const wanted = (url: string, incognito: boolean): boolean => {
    if (inScope(effective(settings, lab), url, incognito)) return true;
    if (lab !== null || incognito || experiment === null) return false;
    try {
      const u = new URL(url);
      return (u.protocol === "https:" || u.protocol === "http:") && enrolledDomain(experiment, u.hostname) !== null;
    } catch {
      return false;
    }
  };

  const handlers = {
    hello: (m) => {
      lab = m.lab;
      void browser.storage.session.set({ lab: m.lab, host_version: m.host_version });
      flush();
      askedRelay = false;
      if (lab?.record) {
        const cfg = lab;
        const start = (): void => void labRunner.start(cfg.navigate, cfg.advance).catch((e: unknown) => console.error("protolens: lab", e));
        // the host's policies message follows its hello: the first lab URL waits for the PAC and
        // throttling rules (at most 2 s, for a host that sends none)
        const timer = setTimeout(start, 2000);
        onPoliciesApplied = () => { clearTimeout(timer); start(); };
      }
    },
    ack: async (m) => {
      inflight.delete(m.msg_id);
      await outbox.update((s) => ack(s, m.msg_id));
      await labRunner.onAck(m.id);
    },
    pong: () => undefined,
    policies: (m) => {
      if (m.error !== null) console.warn(`protolens: policies: ${m.error}`);
      policies = { rules: m.rules, relay: m.relay };
      if (m.relay !== null) askedRelay = false;
      void applyPolicies().then(() => {
        onPoliciesApplied();
        onPoliciesApplied = () => undefined;
      });
    },
    query_result: () => undefined, // only the dashboard's own port sends queries
    contribute_status: () => undefined, // only the options page and popup ask (their own port)
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
    for (const tab of await browser.tabs.query({})) {
      if (tab.id === undefined || tab.id === labRunner.labTab) continue;
      const want = wanted(tab.url ?? "", tab.incognito);
      if (want && !dbg.isAttached(tab.id)) await attach(tab.id).catch(() => undefined);
      else if (!want && dbg.isAttached(tab.id)) await dbg.detach(tab.id);
    }
  };
  onSettingsChanged((s) => {
    settings = s;
    void syncTabs();
  });
  onExperimentChanged((x) => {
    experiment = x;
    void applyPolicies().then(syncTabs);
  });
  chrome.tabs.onRemoved.addListener((tabId) => throttler.forget(tabId));
  void syncTabs();
  link.connect();
  return {
    // Passive recording: attach before each top-level navigation of an in-scope tab.
    async onBeforeNavigate(d) {
      if (d.frameId !== 0) return;
      const tab = await browser.tabs.get(d.tabId).catch(() => null);
      if (tab === null) return;
      const want = wanted(d.url, tab.incognito);
      if (want && !dbg.isAttached(d.tabId)) await attach(d.tabId).catch(() => undefined);
      else if (!want && dbg.isAttached(d.tabId) && d.tabId !== labRunner.labTab) await dbg.detach(d.tabId);
    },
    // A new tab opened on an in-scope URL (a link or window.open into a new tab, tabs.create):
    // attach now, the earliest moment, instead of at its onBeforeNavigate.
    async onCreated(tab) {
      const url = tab.pendingUrl ?? tab.url ?? "";
      if (tab.id === undefined || tab.id === labRunner.labTab || dbg.isAttached(tab.id)) return;
      if (wanted(url, tab.incognito)) await attach(tab.id).catch((e: unknown) => console.warn("protolens: attach at tab creation", e));
    },
    // A tab that could not be attached before its navigation (it showed chrome://newtab, which
    // chrome.debugger refuses): attach at the commit; the recorder joins the load under way
    // (src/cdp/late.ts, "commit").
    async onCommitted(d) {
      if (d.frameId !== 0 || d.tabId === labRunner.labTab || dbg.isAttached(d.tabId)) return;
      const tab = await browser.tabs.get(d.tabId).catch(() => null);
      if (tab !== null && wanted(d.url, tab.incognito)) await attach(d.tabId, true).catch(() => undefined);
    },
  };
}

// Listeners at the top level, so an event that wakes the worker is delivered (MV3 rule).
installAuthListener();
const app = main();
app.catch((e: unknown) => console.error("protolens: startup failed", e));
chrome.webNavigation.onBeforeNavigate.addListener((d) => void app.then((a) => a.onBeforeNavigate(d)));
chrome.webNavigation.onCommitted.addListener((d) => void app.then((a) => a.onCommitted(d)));
chrome.tabs.onCreated.addListener((tab) => void app.then((a) => a.onCreated(tab)));
chrome.tabs.onRemoved.addListener((tabId) => void forgetTab(tabId));
