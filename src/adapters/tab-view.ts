/**
 * Adapter: what the popup and the toolbar show per tab: the last record (chrome.storage.session,
 * gone when the browser closes) and a badge with the main document's protocol family.
 */
import browser from "webextension-polyfill";
import type { NavigationRecord } from "../record/types.ts";

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
