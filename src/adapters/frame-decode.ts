/**
 * Adapter: a screencast frame's base64 JPEG decoded by Chromium's own image decoder
 * (createImageBitmap and OffscreenCanvas, both present in the MV3 service worker: verified,
 * Chromium 156), its pixels handed to the pure histogramOf (src/visual/histogram.ts).
 * No colour-space conversion or premultiplication: the histogram counts the pixels as encoded.
 */
import { histogramOf } from "../visual/histogram.ts";

export async function frameHistogram(jpeg: string): Promise<number[]> {
  const bytes = Uint8Array.from(atob(jpeg), (c) => c.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }),
    { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  try {
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    if (ctx === null) throw new Error("frame decode: no 2d context");
    ctx.drawImage(bitmap, 0, 0);
    return histogramOf(ctx.getImageData(0, 0, bitmap.width, bitmap.height).data);
  } finally {
    bitmap.close();
  }
}
