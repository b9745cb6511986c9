/**
 * Adapter: per-domain latency / throughput through CDP Network.emulateNetworkConditionsByRule on
 * the tabs the recorder is attached to (verified through chrome.debugger, docs/ARCHITECTURE.md), also on
 * their out-of-process iframes' sessions. Keeps, per tab, which rule id Chromium reports as applied
 * to each request (Network.requestWillBeSentExtraInfo.appliedNetworkConditionsId).
 */
import type { Protocol } from "devtools-protocol";
import type { Throttling } from "../policy/ruleset.ts";

const EMULATE = "Network.emulateNetworkConditionsByRule";

export class Throttler {
  private t: Throttling = { conditions: [], owners: [] };
  /** tabs on which conditions (possibly none) are installed */
  private readonly tabs = new Set<number>();
  private readonly applied = new Map<number, Map<string, string>>();
  /** rule patterns whose conditions Chromium accepted */
  readonly installed = new Set<string>();

  constructor() {
    chrome.debugger.onEvent.addListener((source, method, params) => {
      const tabId = source.tabId;
      if (tabId === undefined) return;
      if (method === "Network.requestWillBeSentExtraInfo") {
        const id = params?.appliedNetworkConditionsId;
        const requestId = params?.requestId;
        if (typeof id !== "string" || typeof requestId !== "string") return;
        const m = this.applied.get(tabId) ?? new Map<string, string>();
        m.set(requestId, id);
        this.applied.set(tabId, m);
      } else if (method === "Target.attachedToTarget" && this.t.conditions.length > 0) {
        const sessionId = params?.sessionId;
        if (typeof sessionId === "string") void this.send({ tabId, sessionId }).catch(() => undefined);
      }
    });
    chrome.debugger.onDetach.addListener((source) => {
      if (source.tabId !== undefined) this.tabs.delete(source.tabId);
    });
  }

  private async send(target: chrome.debugger.DebuggerSession): Promise<string[]> {
    const params: Protocol.Network.EmulateNetworkConditionsByRuleRequest = { matchedNetworkConditions: this.t.conditions };
    const res: unknown = await chrome.debugger.sendCommand(target, EMULATE, params);
    const ids = typeof res === "object" && res !== null ? (res as { ruleIds?: unknown }).ruleIds : undefined;
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string") : [];
  }

  /** Install the current conditions on a freshly attached tab (nothing to do without any). */
  async apply(tabId: number): Promise<void> {
    if (this.t.conditions.length === 0 && !this.tabs.has(tabId)) return;
    const ids = await this.send({ tabId });
    this.tabs.add(tabId);
    ids.forEach((_, i) => { const o = this.t.owners[i]; if (o !== undefined) this.installed.add(o); });
  }

  /** New rules: reinstall on every tab that has conditions or needs them. */
  async update(t: Throttling, attached: readonly number[]): Promise<void> {
    this.t = t;
    this.installed.clear();
    for (const tabId of attached) await this.apply(tabId).catch(() => undefined);
  }

  /** CDP requestId -> applied rule id for `tabId`'s requests in `requestIds`, forgetting them. */
  take(tabId: number, requestIds: readonly string[]): Map<string, string> {
    const m = this.applied.get(tabId);
    const out = new Map<string, string>();
    if (m === undefined) return out;
    for (const rid of requestIds) {
      const i = rid.lastIndexOf(":");
      const id = i < 0 ? rid : rid.slice(0, i);
      const v = m.get(id);
      if (v !== undefined) { out.set(id, v); m.delete(id); }
    }
    return out;
  }

  forget(tabId: number): void {
    this.applied.delete(tabId);
    this.tabs.delete(tabId);
  }
}
