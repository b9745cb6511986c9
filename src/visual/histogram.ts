/**
 * A painted frame's colour histogram, the input of visual progress (src/visual/metrics.ts). Pure:
 * the adapter decodes the screencast's JPEG (Chromium's own decoder, src/adapters/frame-decode.ts)
 * and hands the RGBA bytes here.
 *
 * One flat array of 768 counts: red values 0..255, then green, then blue. Near-white pixels are
 * left out, as Lighthouse's speedline does (core/lib/frame.js `isWhitePixel`: every channel at
 * least 249; WebPageTest's visualmetrics drops >= 250), so the blank page is the empty histogram
 * and JPEG ringing on a white background does not count as content.
 */

export const HISTOGRAM_LENGTH = 768;
/** A pixel with all three channels at or above this is white (speedline, frame.js). */
export const WHITE_MIN = 249;

export type Histogram = readonly number[];

/** The histogram of RGBA pixels (4 bytes per pixel, alpha ignored). */
export function histogramOf(rgba: ArrayLike<number>): number[] {
  const counts = new Uint32Array(HISTOGRAM_LENGTH);
  const n = rgba.length - (rgba.length % 4);
  for (let i = 0; i < n; i += 4) {
    const r = rgba[i] ?? 0;
    const g = rgba[i + 1] ?? 0;
    const b = rgba[i + 2] ?? 0;
    if (r >= WHITE_MIN && g >= WHITE_MIN && b >= WHITE_MIN) continue;
    counts[r] = (counts[r] ?? 0) + 1;
    counts[256 + g] = (counts[256 + g] ?? 0) + 1;
    counts[512 + b] = (counts[512 + b] ?? 0) + 1;
  }
  return Array.from(counts);
}

/** A relayed histogram as it crossed a boundary (a fixture line, a message): 768 counts that are
 * non-negative integers, else null. */
export function parseHistogram(v: unknown): number[] | null {
  if (!Array.isArray(v) || v.length !== HISTOGRAM_LENGTH) return null;
  const out: number[] = [];
  for (const x of v) {
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0) return null;
    out.push(x);
  }
  return out;
}

export function sameHistogram(a: Histogram, b: Histogram): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
