/**
 * Adapter: what the popup and the toolbar show per tab: the last record (chrome.storage.session,
 * gone when the browser closes) and a badge with the main document's protocol family.
 */
import browser from "webextension-polyfill";
import type { NavigationRecord } from "../record/types.ts";
import { PAUSED_BADGE } from "../worker/pause.ts";

export const lastKey = (tabId: number): string => `last:${tabId}`;

export async function showRecord(tabId: number, record: NavigationRecord): Promise<void> {
  await browser.storage.session.set({ [lastKey(tabId)]: record });
  const main = record.requests.filter((r) => r.is_main_document).pop();
  const text = main?.family ? main.family.toUpperCase() : "";
  await chrome.action.setBadgeText({ tabId, text }).catch(() => undefined);
}

export async function forgetTab(tabId: number): Promise<void> {
  await browser.storage.session.remove(lastKey(tabId));
}

export async function readLast(tabId: number): Promise<unknown> {
  const got = await browser.storage.session.get(lastKey(tabId));
  return got[lastKey(tabId)] ?? null;
}

export async function activeTabId(): Promise<number | null> {
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  return tab?.id ?? null;
}

export async function labState(): Promise<{ lab: boolean; host: string | null }> {
  const got = await browser.storage.session.get(["lab", "host_version"]);
  return { lab: got.lab !== null && got.lab !== undefined, host: typeof got.host_version === "string" ? got.host_version : null };
}

/** The pause on the icon: "OFF" on every tab while paused (a tab's own badge would hide a
 * global one), cleared when recording resumes. */
export async function showPause(paused: boolean, until: number | null): Promise<void> {
  const text = paused ? PAUSED_BADGE : "";
  const title = !paused ? "ProtoLens" : until === null ? "ProtoLens: recording paused until you turn it on"
    : `ProtoLens: recording paused until ${new Date(until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
  await chrome.action.setBadgeText({ text });
  await chrome.action.setTitle({ title });
  for (const tab of await browser.tabs.query({})) {
    if (tab.id !== undefined) await chrome.action.setBadgeText({ tabId: tab.id, text }).catch(() => undefined);
  }
}
