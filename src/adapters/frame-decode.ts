/**
 * Adapter: a screencast frame's base64 JPEG decoded by Chromium's own image decoder
 * (createImageBitmap and OffscreenCanvas, both present in the MV3 service worker: verified,
 * Chromium 156), its pixels handed to the pure histogramOf (src/visual/histogram.ts).
 * No colour-space conversion or premultiplication: the histogram counts the pixels as encoded.
 */
import { histogramOf } from "../visual/histogram.ts";

/** Base64 to bytes: Uint8Array.fromBase64 where the engine has it (TC39 proposal-arraybuffer-base64;
 * present in Chromium 156, verified), else atob and a loop. Uint8Array.from(atob(s), mapFn), a
 * callback per byte, took 2.6 ms for a 40 kB frame against 0.08 ms (scripts/bench/recorder_core_cpu.ts). */
export function base64Bytes(b64: string): Uint8Array<ArrayBuffer> {
  const native = Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> };
  if (typeof native.fromBase64 === "function") return native.fromBase64(b64);
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** The last frame's canvas, drawn over by the next frame of its size: a JPEG is opaque, so each
 * frame covers every pixel of it, and drawing and reading back run with no await between them,
 * so two frames decoded at once never share it half-way. A new canvas and context per frame took
 * 4-6 ms per load of the test site's page (sw_profile.py --visual, `getContext`). */
let last: { canvas: OffscreenCanvas; ctx: OffscreenCanvasRenderingContext2D } | null = null;

function canvasFor(width: number, height: number): OffscreenCanvasRenderingContext2D {
  if (last !== null && last.canvas.width === width && last.canvas.height === height) return last.ctx;
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  if (ctx === null) throw new Error("frame decode: no 2d context");
  last = { canvas, ctx };
  return ctx;
}

export async function frameHistogram(jpeg: string): Promise<number[]> {
  const bytes = base64Bytes(jpeg);
  const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }),
    { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  try {
    const ctx = canvasFor(bitmap.width, bitmap.height);
    ctx.drawImage(bitmap, 0, 0);
    return histogramOf(ctx.getImageData(0, 0, bitmap.width, bitmap.height).data);
  } finally {
    bitmap.close();
  }
}
