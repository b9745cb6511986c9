/**
 * Visual metrics of one page load from its painted frames: first visual change, SpeedIndex,
 * visually complete 85% and 99%, last visual change. Pure; times in ms from navigation start.
 *
 * The definitions are WebPageTest's visualmetrics (browsertime/visualmetrics-portable.py) and
 * Lighthouse's speedline (core/lib/speed-index.js), which agree on them:
 * - frames are kept only where the picture changed (consecutive equal histograms are one frame);
 * - a frame's visual progress compares its colour histogram with the first frame's (the screen
 *   when the navigation started) and the last frame's: per channel and value,
 *   min(|current - first|, |last - first|) summed over all bins, divided by the sum of
 *   |last - first|, floored to a whole percent (100 when first and last are equal);
 * - SpeedIndex = the integral over time of (1 - progress), from navigation start to the last
 *   frame, with progress constant between frames;
 * - first / last visual change: the first / last frame that differs from the one before it;
 *   visually complete X%: the first frame whose progress is at least X (browsertime's
 *   extraMetrics.js VisualComplete85/95/99).
 */
import { sameHistogram, type Histogram } from "./histogram.ts";

export interface TimedHistogram {
  /** When the frame was shown, ms from navigation start. */
  t: number;
  histogram: Histogram;
}

export interface VisualMetrics {
  first_visual_change_ms: number;
  speed_index_ms: number;
  visual_complete_85_ms: number;
  visual_complete_99_ms: number;
  last_visual_change_ms: number;
}

/** Whole percent of the way from `initial` to `target` that `current` has come (0..100). */
export function frameProgress(current: Histogram, initial: Histogram, target: Histogram): number {
  let match = 0;
  let total = 0;
  for (let i = 0; i < target.length; i++) {
    const first = initial[i] ?? 0;
    const want = Math.abs((target[i] ?? 0) - first);
    match += Math.min(Math.abs((current[i] ?? 0) - first), want);
    total += want;
  }
  return total === 0 ? 100 : Math.floor((match / total) * 100);
}

/**
 * The metrics from the screen at navigation start (`initial`, shown from time 0) and the frames
 * painted after it; null when nothing on screen changed (no change, no SpeedIndex).
 */
export function visualMetrics(initial: Histogram, frames: readonly TimedHistogram[]): VisualMetrics | null {
  const kept: TimedHistogram[] = [];
  let previous = initial;
  for (const f of [...frames].sort((a, b) => a.t - b.t)) {
    if (sameHistogram(f.histogram, previous)) continue;
    kept.push({ t: Math.max(0, f.t), histogram: f.histogram });
    previous = f.histogram;
  }
  const first = kept[0];
  const last = kept[kept.length - 1];
  if (first === undefined || last === undefined) return null;
  let speedIndex = 0;
  let at = 0;
  let progress = 0;
  let vc85: number | null = null;
  let vc99: number | null = null;
  for (const f of kept) {
    speedIndex += (f.t - at) * (1 - progress / 100);
    at = f.t;
    progress = frameProgress(f.histogram, initial, last.histogram);
    if (vc85 === null && progress >= 85) vc85 = f.t;
    if (vc99 === null && progress >= 99) vc99 = f.t;
  }
  return {
    first_visual_change_ms: first.t,
    speed_index_ms: speedIndex,
    // the last frame is 100% by definition, so both are set by then
    visual_complete_85_ms: vc85 ?? last.t,
    visual_complete_99_ms: vc99 ?? last.t,
    last_visual_change_ms: last.t,
  };
}

/**
 * One navigation's metrics from every frame seen around it (ms from navigation start, any order):
 * the screen at its start is the last frame shown no later than its document's commit (nothing
 * of the new document can be painted before it commits, and Chromium keeps the old picture until
 * the new one paints); the frames after the commit are its progress. Null without such a frame
 * (the capture began after the commit) or without a commit.
 */
export function navigationVisuals(frames: readonly TimedHistogram[], commitMs: number | null): VisualMetrics | null {
  if (commitMs === null) return null;
  let initial: TimedHistogram | null = null;
  const after: TimedHistogram[] = [];
  for (const f of frames) {
    if (f.t > commitMs) after.push(f);
    else if (initial === null || f.t >= initial.t) initial = f;
  }
  return initial === null ? null : visualMetrics(initial.histogram, after);
}
