/**
 * Adapter: the pause switch (src/worker/pause.ts) in chrome.storage.local (key "pause"; absent =
 * recording as the settings say), validated on read. The popup writes it, the worker listens.
 */
import browser from "webextension-polyfill";
import { PAUSE_KEY, parsePause, type Pause } from "../worker/pause.ts";

export async function loadPause(): Promise<Pause | null> {
  const got = await browser.storage.local.get(PAUSE_KEY);
  return parsePause(got[PAUSE_KEY]);
}

export async function savePause(p: Pause | null): Promise<void> {
  if (p === null) await browser.storage.local.remove(PAUSE_KEY);
  else await browser.storage.local.set({ [PAUSE_KEY]: p });
}

export function onPauseChanged(cb: (p: Pause | null) => void): void {
  browser.storage.onChanged.addListener((changes, area) => {
    const c = changes[PAUSE_KEY];
    if (area === "local" && c !== undefined) cb(parsePause(c.newValue));
  });
}
