/** The recorder core on synthetic event streams: completion rules, sessions, failures, metrics. */
import { describe, expect, it } from "vitest";
import type { Protocol } from "devtools-protocol";
import { loadMetricsEvent } from "../../src/cdp/enable-commands.ts";
import { navTimingEvent } from "../../src/cdp/late.ts";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { fromLog } from "../../src/cdp/from-log.ts";
import { MAX_FRAMES, Recorder } from "../../src/cdp/recorder.ts";
import {
  FRAME, committed, failed, fetched, finished, lcpCandidate, lifecycle, navigation, options, paintedFrame, received, request,
  response,
} from "./events.ts";

const PAGE = "https://a.test/page/";

function loadedPage(t0 = 100): Recorder {
  const rec = new Recorder(options());
  for (const ev of [navigation("L1", PAGE, t0), received("L1", t0 + 0.01, response(PAGE)), finished("L1", t0 + 0.02, 500),
    ...fetched("r1", `${PAGE}a.png`, t0 + 0.03, 1000), lifecycle("load", "L1", t0 + 0.1)]) {
    expect(rec.push(ev)).toEqual([]);
  }
  return rec;
}

describe("completion", () => {
  it("waits for 2 s of network quiet after load", () => {
    const rec = loadedPage();
    expect(rec.poll(101.5)).toEqual([]);
    const [r] = rec.poll(102.2);
    expect(r?.milestones.load_ms).toBe(100);
    expect(r?.page.aborted).toBe(false);
    expect(rec.active).toBe(false);
  });

  it("a late request restarts the quiet period and is included", () => {
    const rec = loadedPage();
    for (const ev of fetched("late", `${PAGE}late.json`, 101.5, 300)) rec.push(ev);
    expect(rec.poll(103.0)).toEqual([]);
    const [r] = rec.poll(103.6);
    expect(r?.requests.map((q) => q.url)).toContain(`${PAGE}late.json`);
  });

  it("a lab's shorter quiet (limits.quietMs) still takes in a request 300 ms after load", () => {
    const lab = (): Recorder => {
      const rec = new Recorder(options({ limits: { quietMs: 500 } }));
      for (const ev of [navigation("L1", PAGE, 100), received("L1", 100.01, response(PAGE)), finished("L1", 100.02, 500),
        lifecycle("load", "L1", 100.1)]) rec.push(ev);
      return rec;
    };
    const late = lab();
    expect(late.poll(100.4)).toEqual([]);
    for (const ev of fetched("late", `${PAGE}late.json`, 100.4, 50)) late.push(ev);
    expect(late.poll(100.9)).toEqual([]);
    const [r] = late.poll(100.96);
    expect(r?.requests.map((q) => q.url)).toContain(`${PAGE}late.json`);
    // and it is a bound: the record of a page quiet for 500 ms is complete, a request after that
    // belongs to no record
    const quiet = lab();
    const [q] = quiet.poll(100.6);
    expect(q?.requests.map((x) => x.url)).toEqual([PAGE]);
    expect(quiet.active).toBe(false);
  });

  describe("the picture settles too (a screencast's frames)", () => {
    const wall = (t: number): number => 1_700_000_000 + t; // events.ts: wallTime = 1.7e9 + timestamp
    /** A lab page (200 ms quiet) loaded at 100.1 s; the screen before it blank. */
    const lab = (): Recorder => {
      const rec = new Recorder(options({ visual: true, limits: { quietMs: 200 } }));
      for (const ev of [paintedFrame(wall(99.9), 0), navigation("L1", PAGE, 100), lifecycle("init", "L1", 100.005),
        committed("L1", PAGE), received("L1", 100.01, response(PAGE)), finished("L1", 100.02, 500),
        lifecycle("load", "L1", 100.1)]) rec.push(ev);
      return rec;
    };

    it("a change of the picture after load holds the record like a network event", () => {
      const rec = lab();
      rec.push(paintedFrame(wall(100.25), 100)); // painted 150 ms after load, no network since
      expect(rec.poll(100.35)).toEqual([]); // the network has been quiet 250 ms, the picture 100
      rec.push(paintedFrame(wall(100.3), 100)); // the same picture again: not a change
      expect(rec.poll(100.44)).toEqual([]);
      const [r] = rec.poll(100.46);
      expect(r?.milestones.last_visual_change_ms).toBeCloseTo(250, 6);
    });

    it("without a change after load, the network's quiet alone ends it", () => {
      const rec = lab();
      rec.push(paintedFrame(wall(100.05), 100)); // the last change, before load
      expect(rec.poll(100.29)).toEqual([]);
      expect(rec.poll(100.31)).toHaveLength(1);
    });

    it("a picture that never stops changing holds it for one more quiet at most", () => {
      const rec = lab();
      let t = 100.1;
      let done: unknown[] = [];
      for (; done.length === 0 && t < 101; t += 0.05) {
        rec.push(paintedFrame(wall(t), Math.round(t * 20) % 2 === 0 ? 100 : 200));
        done = rec.poll(t + 0.001);
      }
      // the network quiet since load (100.1) reaches twice 200 ms at 100.5
      expect(t).toBeGreaterThan(100.5);
      expect(t).toBeLessThan(100.6);
    });
  });

  it("a request that never ends holds the record until 30 s after load", () => {
    const rec = loadedPage();
    rec.push(request("hang", `${PAGE}hang`, 100.5));
    expect(rec.poll(129.0)).toEqual([]);
    const [r] = rec.poll(130.2);
    expect(r?.requests.find((q) => q.url.endsWith("hang"))?.end_ms).toBeNull();
  });

  it("a page without a load event ends after 120 s, not aborted", () => {
    const rec = new Recorder(options());
    rec.push(navigation("L1", PAGE, 10));
    expect(rec.poll(129)).toEqual([]);
    const [r] = rec.poll(130.1);
    expect(r).toMatchObject({ page: { aborted: false }, milestones: { load_ms: null } });
  });

  it("flush before load (tab closed) gives an aborted record", () => {
    const rec = new Recorder(options());
    rec.push(navigation("L1", PAGE, 10));
    expect(rec.flush()[0]?.page.aborted).toBe(true);
    expect(rec.flush()).toEqual([]);
  });

  it("a new main navigation completes the previous one at its commit (aborted only if before load)", () => {
    // the page's load event says its document committed (its frameNavigated may have come before
    // Page.enable took effect: handlers/page.ts), so the next navigation waits for its own commit
    const rec = loadedPage();
    expect(rec.push(navigation("L2", `${PAGE}?2`, 100.5))).toEqual([]);
    const [done] = rec.push(committed("L2", `${PAGE}?2`));
    expect(done?.page).toMatchObject({ aborted: false, url: PAGE });
    expect(rec.push(navigation("L3", `${PAGE}?3`, 100.6))).toEqual([]);
    const [cut] = rec.push(committed("L3", `${PAGE}?3`));
    expect(cut?.page).toMatchObject({ aborted: true, url: `${PAGE}?2` });
  });
});

describe("requests", () => {
  it("a failed main document sets page.error", () => {
    const [r] = fromLog([navigation("L1", PAGE, 1), failed("L1", 1.1, "net::ERR_CONNECTION_REFUSED")], options());
    expect(r?.page).toMatchObject({ error: "net::ERR_CONNECTION_REFUSED", aborted: false });
    expect(r?.requests[0]).toMatchObject({ failed: true, failure: "net::ERR_CONNECTION_REFUSED" });
  });

  it("redirect hops get their own request_id and status", () => {
    const hop0 = navigation("L1", "https://a.test/old", 1);
    const hop1 = request("L1", PAGE, 1.05, { type: "Document", loaderId: "L1", redirect: response("https://a.test/old", { status: 302, encoded: 120 }) });
    const [r] = fromLog([hop0, hop1, received("L1", 1.1, response(PAGE)), finished("L1", 1.2, 900)], options());
    expect(r?.requests.map((q) => [q.request_id, q.status, q.encoded_bytes])).toEqual([["L1:0", 302, 120], ["L1:1", 200, 900]]);
    expect(r?.page.redirects).toEqual(["https://a.test/old"]);
  });

  it("requests from a child session with a colliding id stay apart", () => {
    const events = [navigation("L1", PAGE, 1), ...fetched("7.1", `${PAGE}x.png`, 1.1, 100, 1),
      request("7.1", "https://b.test/y.png", 1.2, { sessionId: "CHILD" }),
      received("7.1", 1.25, response("https://b.test/y.png", { connectionId: 2 }), "CHILD"), finished("7.1", 1.3, 50, "CHILD")];
    const [r] = fromLog(events, options());
    expect(r?.requests.map((q) => [q.host, q.encoded_bytes])).toEqual([["a.test", 0], ["a.test", 100], ["b.test", 50]]);
    expect(r?.connections.map((c) => c.share)).toEqual([100 / 150, 50 / 150]);
  });

  it("cache hits carry no connection and make the page warm", () => {
    const events = [navigation("L1", PAGE, 1), request("c", `${PAGE}c.png`, 1.1),
      received("c", 1.11, response(`${PAGE}c.png`, { fromDiskCache: true, connectionId: 0 })), finished("c", 1.12, 0)];
    const [r] = fromLog(events, options());
    expect(r?.requests[1]).toMatchObject({ from_disk_cache: true, connection_id: null });
    expect(r?.page.warm).toBe(true);
    expect(r?.connections).toEqual([]);
  });

  it("ignores non-http requests and events of unknown requests", () => {
    const events = [navigation("L1", PAGE, 1), request("d", "data:image/png;base64,AAAA", 1.1), finished("zzz", 1.2, 5)];
    const [r] = fromLog(events, options());
    expect(r?.requests).toHaveLength(1);
  });

  it("URL detail applies to every URL in the record", () => {
    const [r] = fromLog([navigation("L1", "https://a.test/p/q?secret=1#f", 1), ...fetched("x", "https://a.test/i.png?t=2", 1.1, 10)], options({ urlDetail: "origin" }));
    expect(r?.page.url).toBe("https://a.test");
    expect(r?.requests.map((q) => q.url)).toEqual(["https://a.test", "https://a.test"]);
    expect(JSON.stringify(r)).not.toContain("secret");
  });
});

describe("largest contentful paint", () => {
  const wall = (t: number) => 1_700_000_000 + t; // events.ts: wallTime = 1.7e9 + timestamp

  it("is the top document's last candidate after commit, in ms after navigation start", () => {
    const events = [navigation("L1", PAGE, 100), lcpCandidate(wall(100.05)), committed("L1", PAGE),
      lcpCandidate(wall(100.2)), lcpCandidate(wall(100.3)),
      lcpCandidate(wall(100.9), { name: "pageBinding" }), lcpCandidate(wall(100.8), { sessionId: "S" }),
      ...["", "nope", "{}", '{"t":"1"}', '{"t":-5}', "null"].map((payload) => lcpCandidate(0, { payload }))];
    const [r] = fromLog(events, options());
    expect(r?.milestones.lcp_ms).toBe(300);
  });

  it("stays null without a candidate, or when candidates came before the commit", () => {
    expect(fromLog([navigation("L1", PAGE, 100), committed("L1", PAGE)], options())[0]?.milestones.lcp_ms).toBeNull();
    const early = [navigation("L1", PAGE, 100), lcpCandidate(wall(100.1)), committed("L2", PAGE)];
    expect(fromLog(early, options())[0]?.milestones.lcp_ms).toBeNull();
  });

  it("follows the page's navigation start from Performance.getMetrics", () => {
    const events = [navigation("L1", PAGE, 100), committed("L1", PAGE), lcpCandidate(wall(100.3)),
      loadMetricsEvent([{ name: "NavigationStart", value: 99.995 }])];
    expect(fromLog(events, options())[0]?.milestones.lcp_ms).toBe(305);
  });
});

describe("visual metrics (src/visual/)", () => {
  const wall = (t: number) => 1_700_000_000 + t; // events.ts: wallTime = 1.7e9 + timestamp
  /** A page painted in quarters at 100 + 0.4, 0.8, 1.2, 1.6 s; the screen before it was blank. */
  const painted = (extra: RawEvent[] = [], o: { before?: boolean } = {}): RawEvent[] => [
    ...(o.before === false ? [] : [paintedFrame(wall(99.5), 0)]),
    navigation("L1", PAGE, 100), lifecycle("init", "L1", 100.05), committed("L1", PAGE),
    ...[0.4, 0.8, 1.2, 1.6].map((d, i) => paintedFrame(wall(100 + d), 100 * (i + 1))),
    lifecycle("load", "L1", 101.7), ...extra];

  it("are computed from the frames around the navigation, in ms from its start", () => {
    const [r] = fromLog(painted(), options({ visual: true }));
    expect(r?.milestones).toMatchObject({
      first_visual_change_ms: 400, speed_index_ms: 1000, visual_complete_85_ms: 1600,
      visual_complete_99_ms: 1600, last_visual_change_ms: 1600,
    });
  });

  it("start from the screen the navigation began on: the previous page's last frame", () => {
    // the previous navigation ends with half the new picture on screen
    const events = [paintedFrame(wall(89.9), 0), navigation("L0", PAGE, 90), lifecycle("init", "L0", 90.05), committed("L0", PAGE),
      paintedFrame(wall(90.5), 200), lifecycle("load", "L0", 90.6), ...painted([], { before: false })];
    const [first, second] = fromLog(events, options({ visual: true }));
    expect(first?.milestones.speed_index_ms).toBe(500);
    expect(second?.milestones.first_visual_change_ms).toBe(400);
    // from 200 pixels to 400: 100 is as far from the start as 300 (histogram progress counts
    // distance, speedline's and visualmetrics' quirk): 50%, then 200 is the start again (0%)
    expect(second?.milestones.speed_index_ms).toBe(400 + 400 * 0.5 + 400 + 400 * 0.5);
  });

  it("are null when off, without a frame before the commit, or for an aborted load", () => {
    const nulls = { first_visual_change_ms: null, speed_index_ms: null, last_visual_change_ms: null };
    expect(fromLog(painted(), options())[0]?.milestones).toMatchObject(nulls);
    expect(fromLog(painted([], { before: false }), options({ visual: true }))[0]?.milestones).toMatchObject(nulls);
    const aborted = painted().filter((ev) => !(ev.method === "Page.lifecycleEvent" && ev.params.name === "load"));
    expect(fromLog(aborted, options({ visual: true }))[0]?.milestones).toMatchObject(nulls);
  });

  it("ignore frames of child sessions and malformed histograms", () => {
    const junk = [paintedFrame(wall(101.9), 900, { sessionId: "S1" }), paintedFrame(wall(101.95), 0, { histogram: [1, 2] }),
      paintedFrame(Number.NaN, 50)];
    const [r] = fromLog(painted(junk), options({ visual: true }));
    expect(r?.milestones.last_visual_change_ms).toBe(1600);
  });

  it("are null past MAX_FRAMES frames in one navigation (an animation)", () => {
    const many = Array.from({ length: MAX_FRAMES }, (_, i) => paintedFrame(wall(100.1 + i / 1e4), i % 2 === 0 ? 5 : 7));
    const [r] = fromLog(painted(many), options({ visual: true }));
    expect(r?.milestones.speed_index_ms).toBeNull();
    expect(r?.milestones.load_ms).not.toBeNull();
  });
});

describe("commit", () => {
  it("drops the previous document's requests still loading before the commit, keeps its own", () => {
    const events = [navigation("L1", PAGE, 1),
      request("old", `${PAGE}old.png`, 1.01, { loaderId: "L0" }),
      request("oopif", "https://b.test/frame/f.png", 1.02, { loaderId: "F0", frameId: "OLDCHILD", sessionId: "S0" }),
      request("hint", `${PAGE}hint.css`, 1.03, { loaderId: "L1" }),
      committed("L1", PAGE), ...fetched("new", `${PAGE}new.png`, 1.1, 10)];
    const [r] = fromLog(events, options());
    expect(r?.requests.map((q) => q.url)).toEqual([PAGE, `${PAGE}hint.css`, `${PAGE}new.png`]);
  });
});

describe("navigation start from Performance.getMetrics", () => {
  const metrics = (v: number) => loadMetricsEvent([{ name: "NavigationStart", value: v }]);

  it("shifts every time to the page's own navigation start", () => {
    const rec = loadedPage(100);
    rec.push(metrics(99.995));
    const [r] = rec.poll(105);
    expect(r?.milestones.load_ms).toBe(105);
    expect(r?.requests[0]?.start_ms).toBe(5);
    expect(r?.page.started_at_ms).toBe((1_700_000_000 + 99.995) * 1000);
  });

  it("ignores a NavigationStart that cannot belong to this navigation", () => {
    for (const v of [100.5, 98.0]) {
      const rec = loadedPage(100);
      rec.push(metrics(v));
      expect(rec.poll(105)[0]?.milestones.load_ms).toBe(100);
    }
  });
});

describe("late attach (src/cdp/late.ts)", () => {
  const ORIGIN_MS = 1_700_000_000_000;
  /** A Document response whose request was sent before the attach; requestTime `t0`. */
  const docResponse = (loaderId: string, t0: number, at: number): RawEvent => {
    const r = { ...response(PAGE, { connectionId: 77 }), responseTime: ORIGIN_MS + (t0 + 0.02 - 50) * 1000,
      timing: { requestTime: t0, receiveHeadersStart: 15, receiveHeadersEnd: 20 } } as Protocol.Network.Response;
    return { method: "Network.responseReceived",
      params: { requestId: loaderId, loaderId, timestamp: at, type: "Document", frameId: FRAME, response: r, hasExtraInfo: false } };
  };
  /** The adapter's relayed Navigation Timing; times in ms after timeOrigin (= CDP second 50). */
  const timing = (loaderId: string, entry: Record<string, unknown> = {}): RawEvent => navTimingEvent(loaderId, JSON.stringify({
    timeOrigin: ORIGIN_MS, entry: {
      name: PAGE, nextHopProtocol: "h2", responseStatus: 200, contentType: "text/html", fetchStart: 2,
      responseStart: 30, responseEnd: 35, transferSize: 1436, encodedBodySize: 1136, decodedBodySize: 4000, ...entry,
    },
  }));
  const navStart = loadMetricsEvent([{ name: "NavigationStart", value: 50 }]);
  const late = () => new Recorder(options({ mainFrameId: FRAME }));

  it("joins at the main document's response: start from its requestTime, method and redirects unknown", () => {
    const [r] = fromLog([docResponse("L1", 50.004, 50.03), finished("L1", 50.04, 1400),
      ...fetched("r1", `${PAGE}a.png`, 50.05, 1000), lifecycle("load", "L1", 50.2)], options({ mainFrameId: FRAME }));
    expect(r?.page).toMatchObject({ late_attach: "response", redirects: [], url: PAGE });
    const main = r?.requests.find((q) => q.is_main_document);
    expect(main).toMatchObject({ method: "", connection_id: 77, encoded_bytes: 1400, start_ms: 0, first_byte_ms: 15 });
    expect(r?.requests).toHaveLength(2);
    // responseTime (headers at requestTime + 20 ms) gives the wall clock of requestTime
    expect(r?.page.started_at_ms).toBeCloseTo(ORIGIN_MS + 0.004 * 1000, 3);
  });

  it("joined at its response, no replayed commit: its DOMContentLoaded commits it, at its response's time at the latest", () => {
    // fixture rw-late-sw: the lifecycle events began at DOMContentLoaded. A request of another
    // loader (the page before, or a prefetch the new document starts) seen before the commit is
    // the new document's only if it began after the document's response (at 50.03)
    const rec = late();
    for (const ev of [docResponse("L1", 50.004, 50.03), finished("L1", 50.04, 1400),
      request("old", `${PAGE}old.png`, 50.01, { loaderId: "L0" }), request("new", `${PAGE}next.html`, 50.05, { loaderId: "P1" }),
      lifecycle("DOMContentLoaded", "L1", 50.1), lifecycle("load", "L1", 50.2), navStart, timing("L1")]) rec.push(ev);
    const [r] = rec.poll(53);
    expect(r?.page.late_attach).toBe("response");
    expect(r?.requests.map((q) => q.url).sort()).toEqual([PAGE, `${PAGE}next.html`]);
  });

  it("joins at the replayed commit; the main document comes from Navigation Timing", () => {
    const rec = late();
    for (const ev of [lifecycle("commit", "L1", 50.04), ...fetched("r1", `${PAGE}a.png`, 50.06, 1000),
      lifecycle("load", "L1", 50.3), navStart, timing("L1")]) expect(rec.push(ev)).toEqual([]);
    const [r] = rec.poll(53);
    expect(r?.page).toMatchObject({ late_attach: "commit", started_at_ms: ORIGIN_MS, redirects: [] });
    expect(r?.milestones).toMatchObject({ load_ms: 300, ttfb_ms: 30 });
    expect(r?.requests.find((q) => q.is_main_document)).toMatchObject({
      url: PAGE, method: "", protocol: "h2", family: "h2", status: 200, mime_type: "text/html", connection_id: null,
      remote_ip: null, encoded_bytes: 1136, body_bytes: 4000, start_ms: 2, end_ms: 35, from_disk_cache: false,
    });
    expect(r?.connections.map((c) => c.connection_id)).toEqual([1]);
  });

  it("a document a prefetch served, joined at its response with its end missed: ends at its response's start, no wire byte", () => {
    // Navigation Timing of such a document (fixture rw-late-prefetched): deliveryType
    // navigational-prefetch, responseEnd 0; its bytes crossed the wire in the prefetching page's load
    const prefetched = { deliveryType: "navigational-prefetch", responseEnd: 0, transferSize: 515, encodedBodySize: 215, decodedBodySize: 215 };
    const run = (entry: Record<string, unknown>) => {
      const rec = late();
      for (const ev of [docResponse("L1", 50.004, 50.03), lifecycle("load", "L1", 50.2), navStart, timing("L1", entry)]) rec.push(ev);
      return rec.poll(53)[0]?.requests.find((q) => q.is_main_document);
    };
    expect(run(prefetched)).toMatchObject({ end_ms: 30, encoded_bytes: 0, body_bytes: 215 });
    // an ordinary document joined the same way: its end and body from Navigation Timing
    expect(run({})).toMatchObject({ end_ms: 35, encoded_bytes: 1136, body_bytes: 4000 });
  });

  it("a first contentful paint the lifecycle events missed comes from the page's paint timing", () => {
    const withFcp = (fcp: unknown): RawEvent => {
      const ev = timing("L1");
      const outer = JSON.parse((ev.params as { payload: string }).payload) as { loaderId: string; result: string };
      return navTimingEvent("L1", JSON.stringify({ ...JSON.parse(outer.result) as object, fcp }));
    };
    const run = (events: RawEvent[]) => {
      const rec = late();
      for (const ev of [lifecycle("commit", "L1", 50.04), ...events, lifecycle("load", "L1", 50.3), navStart]) rec.push(ev);
      return rec;
    };
    // painted before the enable, not in the replay: the relay's entry (ms after timeOrigin)
    const missed = run([]);
    missed.push(withFcp(120.5));
    expect(missed.poll(53)[0]?.milestones.fcp_ms).toBeCloseTo(120.5, 6);
    // the lifecycle event's own time stands when it came
    const seen = run([lifecycle("firstContentfulPaint", "L1", 50.1)]);
    seen.push(withFcp(120.5));
    expect(seen.poll(53)[0]?.milestones.fcp_ms).toBeCloseTo(100, 6);
    // no paint yet, or a malformed value: nothing
    for (const fcp of [null, -3, "120"]) {
      const none = run([]);
      none.push(withFcp(fcp));
      expect(none.poll(53)[0]?.milestones.fcp_ms).toBeNull();
    }
  });

  it("a frame that comes before the late record is placed on the wall clock holds nothing", () => {
    const run = (frameFirst: boolean): NavigationRecord[] => {
      const rec = new Recorder(options({ mainFrameId: FRAME, visual: true, limits: { quietMs: 200 } }));
      const frame = paintedFrame(ORIGIN_MS / 1000 + 0.45, 100); // CDP 50.45: 150 ms after load
      for (const ev of [lifecycle("commit", "L1", 50.04), lifecycle("load", "L1", 50.3), navStart,
        ...(frameFirst ? [frame, timing("L1")] : [timing("L1"), frame])]) rec.push(ev);
      return rec.poll(50.55); // the network quiet 250 ms; a placed paint holds it until 50.65
    };
    expect(run(true)).toHaveLength(1); // no epoch zero yet (the timing places it): not a paint
    expect(run(false)).toEqual([]);
  });

  it("a revalidated document (the cache's body after a 304) is the wire's 304 with no body byte, however it was joined", () => {
    // Navigation Timing of /reval/'s document, Chromium 156 (scripts/devkit/realweb_www): fetched,
    // 842 = 542 + the 300-byte header guess; revalidated (caddy logged 304), 300 alone, status 200
    const fetched200 = { responseStatus: 200, transferSize: 842, encodedBodySize: 542, decodedBodySize: 542 };
    const reval = { ...fetched200, transferSize: 300 };
    const doc = (events: RawEvent[]) => {
      const rec = late();
      for (const ev of events) rec.push(ev);
      return rec.poll(53)[0]?.requests.find((q) => q.is_main_document);
    };
    const commit = (entry: Record<string, unknown>) => doc([lifecycle("commit", "L1", 50.04), lifecycle("load", "L1", 50.3),
      navStart, timing("L1", entry)]);
    expect(commit(reval)).toMatchObject({ status: 304, encoded_bytes: 0, body_bytes: 542, from_disk_cache: false });
    expect(commit(fetched200)).toMatchObject({ status: 200, encoded_bytes: 542, body_bytes: 542 });
    // joined at its response (Chromium's cached 200), its end missed: end and bytes from the timing
    const response = (entry: Record<string, unknown>, more: RawEvent[] = []) => doc([docResponse("L1", 50.004, 50.03),
      ...more, lifecycle("load", "L1", 50.2), navStart, timing("L1", entry)]);
    expect(response(reval)).toMatchObject({ status: 304, encoded_bytes: 0 });
    expect(response(fetched200)).toMatchObject({ status: 200, encoded_bytes: 542 });
    // its end seen (the headers' 30 bytes), the ExtraInfo that said 304 gone before the attach
    expect(response(reval, [finished("L1", 50.04, 30)])).toMatchObject({ status: 304, encoded_bytes: 30 });
    expect(response(fetched200, [finished("L1", 50.04, 842)])).toMatchObject({ status: 200, encoded_bytes: 842 });
    // an empty body fetched and one revalidated both say 300: Chromium's status stands
    expect(commit({ ...reval, encodedBodySize: 0, decodedBodySize: 0 })).toMatchObject({ status: 200, encoded_bytes: 0 });
  });

  it("a document its service worker answered, joined at its commit, is the worker's: no connection, no wire byte", () => {
    // Navigation Timing of the real-web /sw/ page's controlled load (fixture sw-controlled-joined-late)
    const worker = { workerStart: 9.8, nextHopProtocol: "", transferSize: 557, encodedBodySize: 257, decodedBodySize: 257 };
    const run = (entry: Record<string, unknown>) => {
      const rec = late();
      for (const ev of [lifecycle("commit", "L1", 50.04), lifecycle("load", "L1", 50.3), navStart, timing("L1", entry)]) rec.push(ev);
      return rec.poll(53)[0];
    };
    const r = run(worker);
    expect(r?.requests[0]).toMatchObject({ from_service_worker: true, encoded_bytes: 0, body_bytes: 257, connection_id: null,
      family: null });
    expect(r?.page.not_seen).toContain("service_worker_fetches");
    // a worker that let the request go to the network: the network's document, with its protocol
    expect(run({ ...worker, nextHopProtocol: "h2" })?.requests[0]).toMatchObject({ from_service_worker: false,
      encoded_bytes: 257, family: "h2" });
  });

  it("a document from the HTTP cache (transferSize 0) is marked so", () => {
    const rec = late();
    for (const ev of [lifecycle("commit", "L1", 50.04), lifecycle("load", "L1", 50.3), navStart,
      timing("L1", { transferSize: 0 })]) rec.push(ev);
    expect(rec.poll(53)[0]?.requests[0]).toMatchObject({ from_disk_cache: true, from_memory_cache: false });
  });

  it("a commit-joined navigation never given its timing is no record (an already loaded page)", () => {
    const rec = late();
    for (const ev of [lifecycle("commit", "L1", 10), lifecycle("DOMContentLoaded", "L1", 10.1), lifecycle("load", "L1", 10.2)]) {
      rec.push(ev);
    }
    expect(rec.wantsNavigationTiming).toBe(true);
    expect(rec.poll(100)).toEqual([]);
    expect(rec.active).toBe(false);
    rec.push(lifecycle("commit", "L2", 200));
    expect(rec.flush()).toEqual([]);
  });

  it("ignores Navigation Timing of another document, and a commit of an unknown main frame", () => {
    const rec = late();
    for (const ev of [lifecycle("commit", "L1", 50.04), lifecycle("load", "L1", 50.3), navStart, timing("L0")]) rec.push(ev);
    expect(rec.poll(53)).toEqual([]);
    const blind = new Recorder(options());
    blind.push(lifecycle("commit", "L1", 50.04));
    expect(blind.active).toBe(false);
  });

  it("requests whose end is never reported are kept but do not hold a late record open", () => {
    const rec = late();
    for (const ev of [lifecycle("commit", "L1", 50.04), received("r9", 50.05, response(`${PAGE}x.js`, { connectionId: 5 })),
      request("f1", "https://b.test/frame/", 50.1, { type: "Document", loaderId: "f1", frameId: "CHILD" }),
      lifecycle("load", "L1", 50.3), navStart, timing("L1")]) rec.push(ev);
    expect(rec.poll(52.2)).toEqual([]);
    const [r] = rec.poll(52.4);
    expect(r?.requests.find((q) => q.url.endsWith("x.js"))).toMatchObject({ method: "", end_ms: null, connection_id: 5 });
    expect(r?.requests.find((q) => q.url.startsWith("https://b.test"))).toMatchObject({ method: "GET", end_ms: null });
  });

  it("a navigation seen from its request is not late, and its replayed commit starts nothing", () => {
    const rec = loadedPage();
    rec.push(lifecycle("commit", "L1", 100.05));
    const [r] = rec.poll(103);
    expect(r?.page.late_attach).toBeNull();
    expect(r?.requests.filter((q) => q.is_main_document).map((q) => q.method)).toEqual(["GET"]);
  });
});

describe("late attach to a page that had already loaded", () => {
  it("says so, so the adapter can relay its timing at once when it attached at that commit", () => {
    const rec = new Recorder(options({ mainFrameId: FRAME }));
    rec.push(lifecycle("commit", "L1", 10));
    expect(rec.joinedAfterLoad).toBe(false);
    rec.push(lifecycle("load", "L1", 10.2));
    expect(rec.joinedAfterLoad).toBe(true);
    rec.push(loadMetricsEvent([{ name: "NavigationStart", value: 9.99 }]));
    rec.push(navTimingEvent("L1", JSON.stringify({ timeOrigin: 1_700_000_000_000, entry: {
      name: PAGE, nextHopProtocol: "http/1.1", responseStatus: 200, fetchStart: 1, responseStart: 5, responseEnd: 6,
      transferSize: 900, encodedBodySize: 600, decodedBodySize: 600 } })));
    expect(rec.joinedAfterLoad).toBe(false);
    const [r] = rec.poll(12.3);
    expect(r?.page.late_attach).toBe("commit");
    expect(r?.milestones.load_ms).toBe(210);
    expect(r?.requests[0]).toMatchObject({ family: "h1", end_ms: 6 });
  });
});

describe("joining mid-load (attached during a cross-process commit, fixture late-midload)", () => {
  it("joins at the main frame's first own request when nothing was joined since the attach", () => {
    const rec = new Recorder(options({ mainFrameId: FRAME }));
    expect(rec.push(request("r1", `${PAGE}a.png`, 100))).toEqual([]);
    expect(rec.active).toBe(true);
  });

  it("never starts a navigation from a later request once one was recorded (no phantom load)", () => {
    const rec = new Recorder(options({ mainFrameId: FRAME }));
    for (const ev of [navigation("L1", PAGE, 100), received("L1", 100.01, response(PAGE)), finished("L1", 100.02, 500),
      lifecycle("load", "L1", 100.1)]) rec.push(ev);
    expect(rec.poll(103)).toHaveLength(1);
    rec.push(request("xhr", `${PAGE}poll.json`, 110));
    rec.push(lifecycle("networkIdle", "L1", 110.5));
    expect(rec.active).toBe(false);
  });

  it("does not join without the main frame's id, nor from another frame's request", () => {
    const blind = new Recorder(options());
    blind.push(request("r1", `${PAGE}a.png`, 100));
    expect(blind.active).toBe(false);
    const rec = new Recorder(options({ mainFrameId: FRAME }));
    rec.push(request("r2", "https://b.test/x.png", 100, { frameId: "CHILD" }));
    expect(rec.active).toBe(false);
  });
});
