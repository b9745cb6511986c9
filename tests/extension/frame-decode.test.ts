/**
 * The screencast frame's base64 decode (src/adapters/frame-decode.ts base64Bytes), against Node's
 * own decoder on every byte value and lengths that leave 0, 1 and 2 padding characters. Node 20
 * has no Uint8Array.fromBase64, so this runs the atob fallback (Chromium 156 takes the native path).
 */
import { describe, expect, it } from "vitest";
import { base64Bytes } from "../../src/adapters/frame-decode.ts";

describe("base64Bytes", () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (const n of [0, 1, 2, 3, 256, 1000]) {
    it(`decodes ${n} bytes as Node's Buffer does`, () => {
      const bytes = Uint8Array.from({ length: n }, (_, i) => all[(i * 37) % 256] ?? 0);
      const b64 = Buffer.from(bytes).toString("base64");
      expect(Array.from(base64Bytes(b64))).toEqual(Array.from(bytes));
    });
  }

  it("refuses what is not base64, as atob does", () => {
    expect(() => base64Bytes("not base64!")).toThrow();
  });
});
