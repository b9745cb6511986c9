/**
 * The screencast frames the session core relays (ProtoLens.frameHistogram, src/cdp/session.ts):
 * kept per navigation for its visual metrics; before a navigation only the last screen is kept
 * (the screen it starts from). Placed by their wall-clock display time, never by the recorder's
 * monotonic clock (src/cdp/event-clock.ts).
 */
import type { FrameEvent } from "../raw-event.ts";
import { MAX_FRAMES, type TabState } from "../tab-state.ts";
import { parseHistogram } from "../../visual/histogram.ts";
import type { NavigationRecord } from "../../record/types.ts";

export function onFrameHistogram(s: TabState, ev: FrameEvent): NavigationRecord[] {
  const histogram = parseHistogram(ev.params.histogram);
  const wall = ev.params.wallTime;
  if (ev.sessionId !== undefined || histogram === null || typeof wall !== "number" || !Number.isFinite(wall)) return [];
  if (s.nav === null) s.frames = [{ wall, histogram }];
  else if (s.frames.length >= MAX_FRAMES) s.framesOverflow = true;
  else s.frames.push({ wall, histogram });
  return [];
}
