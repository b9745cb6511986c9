import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HISTOGRAM_LENGTH, histogramOf, parseHistogram } from "../../src/visual/histogram.ts";
import { frameProgress, navigationVisuals, visualMetrics, type TimedHistogram } from "../../src/visual/metrics.ts";
import { golden, readLog } from "../../scripts/fixture-io.ts";
import { FRAME_EVENT } from "../../src/cdp/raw-event.ts";

const W = 40;
const H = 20;
/** Four equal blocks (2 x 2) of these colours; they share channel values on purpose (0 and 200). */
const COLORS: [number, number, number][] = [[200, 0, 0], [0, 200, 0], [0, 0, 200], [200, 200, 0]];

/** RGBA of a W x H white screen with the first `shown` blocks painted. */
function screen(shown: number): Uint8ClampedArray {
  const px = new Uint8ClampedArray(W * H * 4).fill(255);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const block = (y < H / 2 ? 0 : 2) + (x < W / 2 ? 0 : 1);
      const c = COLORS[block];
      if (block >= shown || c === undefined) continue;
      px.set([c[0], c[1], c[2], 255], (y * W + x) * 4);
    }
  }
  return px;
}

const blank = histogramOf(screen(0));

describe("histogramOf", () => {
  it("leaves white out and counts each channel of every other pixel", () => {
    expect(blank.every((n) => n === 0)).toBe(true);
    const one = histogramOf(screen(1));
    const block = (W / 2) * (H / 2);
    expect(one[200]).toBe(block); // red 200
    expect(one[256 + 0]).toBe(block); // green 0
    expect(one[512 + 0]).toBe(block); // blue 0
    expect(one.reduce((a, b) => a + b, 0)).toBe(3 * block);
  });

  it("counts near-white below speedline's 249 as content", () => {
    expect(histogramOf([249, 249, 249, 255]).reduce((a, b) => a + b, 0)).toBe(0);
    expect(histogramOf([248, 255, 255, 255])[248]).toBe(1);
  });

  it("parses only 768 non-negative integers", () => {
    expect(parseHistogram(blank)).toEqual(blank);
    expect(parseHistogram(blank.slice(1))).toBeNull();
    expect(parseHistogram([...blank.slice(1), -1])).toBeNull();
    expect(parseHistogram([...blank.slice(1), 0.5])).toBeNull();
    expect(parseHistogram("x")).toBeNull();
  });
});

describe("visual progress", () => {
  it("is the share of blocks shown, for equal blocks sharing channel values", () => {
    const target = histogramOf(screen(4));
    for (let k = 0; k <= 4; k++) expect(frameProgress(histogramOf(screen(k)), blank, target)).toBe(25 * k);
  });

  it("is 100 when first and last frame are equal", () => {
    expect(frameProgress(blank, blank, blank)).toBe(100);
  });

  it("stays within 0..100 for any histograms", () => {
    const hist = fc.array(fc.nat(1000), { minLength: HISTOGRAM_LENGTH, maxLength: HISTOGRAM_LENGTH });
    fc.assert(fc.property(hist, hist, hist, (c, i, t) => {
      const p = frameProgress(c, i, t);
      return Number.isInteger(p) && p >= 0 && p <= 100;
    }));
  });
});

describe("visualMetrics", () => {
  const at = (t: number, shown: number): TimedHistogram => ({ t, histogram: histogramOf(screen(shown)) });

  it("gives the analytic SpeedIndex of four equal blocks: the mean of their times", () => {
    const times = [400, 800, 1200, 1600];
    const m = visualMetrics(blank, times.map((t, i) => at(t, i + 1)));
    expect(m).toEqual({
      first_visual_change_ms: 400,
      speed_index_ms: (400 + 800 + 1200 + 1600) / 4,
      visual_complete_85_ms: 1600, // three blocks are 75%
      visual_complete_99_ms: 1600,
      last_visual_change_ms: 1600,
    });
  });

  it("integrates (1 - progress) between frames, as speedline and visualmetrics do", () => {
    const target = new Array<number>(HISTOGRAM_LENGTH).fill(0);
    target[5] = 10;
    const half = [...target];
    half[5] = 5;
    const m = visualMetrics(blank, [{ t: 300, histogram: target }, { t: 100, histogram: half }]);
    // 100 ms at 0%, then 200 ms at 50%
    expect(m?.speed_index_ms).toBe(100 + 200 * 0.5);
    expect(m?.first_visual_change_ms).toBe(100);
    expect(m?.visual_complete_85_ms).toBe(300);
  });

  it("drops repeated frames: a repaint of the same picture is no change", () => {
    const frames = [at(100, 0), at(400, 2), at(500, 2), at(900, 4), at(1500, 4)];
    const m = visualMetrics(blank, frames);
    expect(m?.first_visual_change_ms).toBe(400);
    expect(m?.last_visual_change_ms).toBe(900);
    expect(m?.speed_index_ms).toBe(400 + 500 * 0.5);
  });

  it("measures from the screen at navigation start, not from white", () => {
    // the previous page showed blocks 1-2 (already half of the new page's picture)
    const m = visualMetrics(histogramOf(screen(2)), [at(300, 4)]);
    expect(m?.speed_index_ms).toBe(300);
    expect(m?.visual_complete_85_ms).toBe(300);
  });

  it("is null when nothing changed on screen", () => {
    expect(visualMetrics(blank, [])).toBeNull();
    expect(visualMetrics(blank, [at(200, 0)])).toBeNull();
  });

  it("orders its milestones for any frames", () => {
    const frames = fc.array(fc.record({ t: fc.integer({ min: 0, max: 10_000 }), shown: fc.integer({ min: 0, max: 4 }) }),
      { maxLength: 12 });
    fc.assert(fc.property(frames, (fs) => {
      const m = visualMetrics(blank, fs.map((f) => at(f.t, f.shown)));
      if (m === null) return fs.every((f) => f.shown === 0);
      return m.first_visual_change_ms <= m.visual_complete_85_ms && m.visual_complete_85_ms <= m.visual_complete_99_ms &&
        m.visual_complete_99_ms <= m.last_visual_change_ms && m.speed_index_ms >= m.first_visual_change_ms &&
        m.speed_index_ms <= m.last_visual_change_ms;
    }));
  });
});

describe("navigationVisuals", () => {
  const at = (t: number, shown: number): TimedHistogram => ({ t, histogram: histogramOf(screen(shown)) });

  it("takes the last frame shown by the commit as the start screen", () => {
    // the previous page (2 blocks) until the commit at 50 ms, then the new page paints
    const m = navigationVisuals([at(-300, 1), at(-20, 2), at(40, 2), at(200, 3), at(600, 4)], 50);
    expect(m?.first_visual_change_ms).toBe(200);
    expect(m?.speed_index_ms).toBe(200 + 400 * 0.5);
  });

  it("is null without a frame by the commit, or without a commit", () => {
    expect(navigationVisuals([at(60, 0), at(200, 4)], 50)).toBeNull();
    expect(navigationVisuals([at(-10, 0), at(200, 4)], null)).toBeNull();
  });
});

describe("the recorded visual fixture (real Chromium, the test page over h2)", () => {
  const [r] = golden("visual");
  const m = r?.milestones;

  it("holds frame histograms only, and the record has every visual metric", () => {
    const frames = readLog("visual").filter((ev) => ev.method === FRAME_EVENT);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(readLog("visual").some((ev) => ev.method === "Page.screencastFrame")).toBe(false);
    for (const key of ["first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms", "visual_complete_99_ms",
      "last_visual_change_ms"] as const) expect(m?.[key]).toEqual(expect.any(Number));
  });

  it("sees the first paint where the browser says it happened, within one 60 Hz frame", () => {
    const fvc = m?.first_visual_change_ms ?? NaN;
    const fcp = m?.fcp_ms ?? NaN;
    expect(fvc - fcp).toBeGreaterThanOrEqual(0);
    expect(fvc - fcp).toBeLessThanOrEqual(1000 / 60);
    expect(m?.speed_index_ms).toBeGreaterThanOrEqual(fvc);
    expect(m?.speed_index_ms).toBeLessThanOrEqual(m?.last_visual_change_ms ?? NaN);
  });
});
