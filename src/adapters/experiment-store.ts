/**
 * Adapter: the volunteer's A/B enrolment (src/experiment/assign.ts) in chrome.storage.local
 * (key "experiment"; absent = not enrolled), validated on read.
 */
import browser from "webextension-polyfill";
import { parseExperiment, type ExperimentState } from "../experiment/assign.ts";

export const EXPERIMENT_KEY = "experiment";

export async function loadExperiment(): Promise<ExperimentState | null> {
  const got = await browser.storage.local.get(EXPERIMENT_KEY);
  return parseExperiment(got[EXPERIMENT_KEY]);
}

export async function saveExperiment(s: ExperimentState | null): Promise<void> {
  if (s === null) await browser.storage.local.remove(EXPERIMENT_KEY);
  else await browser.storage.local.set({ [EXPERIMENT_KEY]: s });
}

export function onExperimentChanged(cb: (s: ExperimentState | null) => void): void {
  browser.storage.onChanged.addListener((changes, area) => {
    const c = changes[EXPERIMENT_KEY];
    if (area === "local" && c !== undefined) cb(parseExperiment(c.newValue));
  });
}
