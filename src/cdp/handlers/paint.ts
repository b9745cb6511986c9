/**
 * The screencast frames the session core relays (ProtoLens.frameHistogram, src/cdp/session.ts):
 * kept per navigation for its visual metrics; before a navigation only the last screen is kept
 * (the screen it starts from). Placed by their wall-clock display time, never by the recorder's
 * monotonic clock (src/cdp/event-clock.ts); a frame that changed the picture tells the navigation
 * when, mapped to CDP time through its own epoch zero, for its quiet (navigation.ts `completes`).
 */
import type { FrameEvent } from "../raw-event.ts";
import { MAX_FRAMES, type TabState } from "../tab-state.ts";
import { parseHistogram, sameHistogram } from "../../visual/histogram.ts";
import type { NavigationRecord } from "../../record/types.ts";

export function onFrameHistogram(s: TabState, ev: FrameEvent): NavigationRecord[] {
  const histogram = parseHistogram(ev.params.histogram);
  const wall = ev.params.wallTime;
  if (ev.sessionId !== undefined || histogram === null || typeof wall !== "number" || !Number.isFinite(wall)) return [];
  const nav = s.nav;
  if (nav === null) {
    s.frames = [{ wall, histogram }];
    return [];
  }
  const previous = s.frames[s.frames.length - 1];
  if (previous === undefined || !sameHistogram(previous.histogram, histogram)) {
    const at = nav.zero + (wall - nav.epochZero);
    if (Number.isFinite(at)) nav.painted(at);
  }
  if (s.frames.length >= MAX_FRAMES) s.framesOverflow = true;
  else s.frames.push({ wall, histogram });
  return [];
}
