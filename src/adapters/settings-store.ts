/**
 * Adapter: the user's settings in chrome.storage.local (key "settings"), validated on read.
 */
import browser from "webextension-polyfill";
import { DEFAULT_SETTINGS, parseSettings, type Settings } from "../policy/settings.ts";

export const SETTINGS_KEY = "settings";

export async function loadSettings(): Promise<Settings> {
  const got = await browser.storage.local.get(SETTINGS_KEY);
  return SETTINGS_KEY in got ? parseSettings(got[SETTINGS_KEY]) : DEFAULT_SETTINGS;
}

export async function saveSettings(s: Settings): Promise<void> {
  await browser.storage.local.set({ [SETTINGS_KEY]: s });
}

export function onSettingsChanged(cb: (s: Settings) => void): void {
  browser.storage.onChanged.addListener((changes, area) => {
    const c = changes[SETTINGS_KEY];
    if (area === "local" && c !== undefined) cb(parseSettings(c.newValue));
  });
}
