/**
 * The popup's pause switch: recording off for the next hour, or until turned on.
 * It only writes the pause (src/adapters/pause-store.ts); the worker core decides what follows
 * (src/worker/core.ts: detach, badge, resume at the hour's end).
 */
import { loadPause, savePause } from "../adapters/pause-store.ts";
import { wallClockMs } from "../adapters/environment.ts";
import { isPaused, pauseForAnHour } from "../worker/pause.ts";
import { byId } from "./dom.ts";

export async function renderPause(lab: boolean): Promise<void> {
  const p = await loadPause();
  const now = wallClockMs();
  const on = !lab && isPaused(p, now);
  const status = byId("pause-status", HTMLElement);
  const hour = byId("pause-hour", HTMLButtonElement);
  const off = byId("pause-off", HTMLButtonElement);
  const resume = byId("resume", HTMLButtonElement);
  const set = (next: Parameters<typeof savePause>[0]) => void savePause(next).then(() => renderPause(lab));
  hour.onclick = () => set(pauseForAnHour(wallClockMs()));
  off.onclick = () => set({ until: null });
  resume.onclick = () => set(null);
  // popup.html starts with every button hidden: one shows only once its handler is set, so a
  // click while the popup still reads its state is never lost (CI caught a test clicking then)
  hour.hidden = on || lab;
  off.hidden = on || lab;
  resume.hidden = !on;
  const until = p?.until ?? null;
  status.textContent = !on ? "" : until === null ? "Paused until you turn it back on."
    : `Paused until ${new Date(until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}.`;
}
