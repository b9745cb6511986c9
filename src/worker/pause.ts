/**
 * The pause switch: recording off for the next hour, or until turned back on.
 * Pure: the popup stores a Pause in chrome.storage.local (src/adapters/pause-store.ts), the
 * worker core (src/worker/core.ts) reads it with the time passed in. `until` is epoch ms; null
 * means "until the user turns recording back on".
 */

export interface Pause { until: number | null }

export const PAUSE_KEY = "pause";
export const HOUR_MS = 60 * 60 * 1000;
/** The badge text while paused (the protocol family badge is hidden meanwhile). */
export const PAUSED_BADGE = "OFF";

/** Stored JSON -> Pause; anything malformed means "not paused" (recording as the settings say). */
export function parsePause(v: unknown): Pause | null {
  if (typeof v !== "object" || v === null || !("until" in v)) return null;
  const until = v.until;
  if (until === null) return { until: null };
  return typeof until === "number" && Number.isFinite(until) && until > 0 ? { until } : null;
}

/** Is recording paused at `now` (epoch ms)? */
export function isPaused(p: Pause | null, now: number): boolean {
  return p !== null && (p.until === null || now < p.until);
}

/** A pause that has run out at `now`: it is cleared (and the tabs in scope attached again). */
export function expired(p: Pause | null, now: number): boolean {
  return p !== null && p.until !== null && now >= p.until;
}

/** The pause for one hour from `now`. */
export function pauseForAnHour(now: number): Pause {
  return { until: now + HOUR_MS };
}
