/**
 * Records raw CDP event logs of real Debian Chromium loading the test site (scripts/devkit/site.py), one file per scenario:
 * tests/fixtures/cdp/<scenario>.jsonl (one minified event per line) and <scenario>.meta.json
 * (flags, browser version, and the page's own performance navigation timing per navigation, so
 * tests can hold milestones.load_ms to loadEventEnd).
 *
 * The tab's session runs the extension's own session core (src/cdp/session.ts: enable commands,
 * child sessions with their retries, the load-event and Navigation Timing relay), through a
 * browser-level CDP connection with flattened sessions instead of chrome.debugger; the fixture
 * is every event that core fed its recorder (chrome.debugger delivers the same events without
 * the tab's own sessionId, which is removed here too).
 *
 *   npx tsx scripts/record-fixtures.ts            # all scenarios
 *   npx tsx scripts/record-fixtures.ts h1 warm    # some
 * Then: npm run regen-goldens
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import jpeg from "jpeg-js";
import { CdpClient } from "./cdp-client.ts";
import { histogramOf } from "../src/visual/histogram.ts";
import { minify } from "../src/cdp/minify.ts";
import { minifyRealweb } from "./minify-realweb.ts";
import type { RawEvent } from "../src/cdp/raw-event.ts";
import { TabSession, runFlow, type FlowIo } from "../src/cdp/session.ts";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "tests/fixtures/cdp");
const QUIET_MS = 2500;

type Site = { url: string; spki: string; port: number; origin: string; httpPort?: number };
type Ctx = {
  site: Site; cdp: CdpClient; session: string; nav: (url: string) => Promise<NavMeta>;
  /** Sends the recorder's enable commands (TAB_COMMANDS) on `session`; done before run() unless
   * the scenario is `late`. */
  enable: () => Promise<void>;
  /** A second session on the same tab whose events are not recorded: drives a late scenario. */
  driver: string;
  /** Waits for the page's load and the network to be quiet, then reads its timing. */
  settle: (url: string) => Promise<NavMeta>;
};
type NavMeta = { url: string; timing: Record<string, unknown> };
/** `late`: the session enables its domains only once the scenario says so; `committed`: as the
 * extension's attach at webNavigation.onCommitted (TabSession.afterAttach). */
/** `visual`: with paint capture on (the screencast; its frames' histograms are in the fixture). */
/** `realweb`: the scenario loads the real-web site (scripts/devkit/realweb.py), not site.py. */
/** `preloading`: the profile keeps Chromium's default preloading (a user's), not the lab's off. */
type Scenario = {
  flags: (s: Site) => string[]; run: (c: Ctx) => Promise<NavMeta[]>; late?: boolean; committed?: boolean; visual?: boolean;
  realweb?: boolean; preloading?: boolean;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SCENARIOS: Record<string, Scenario> = {
  h1: { flags: () => ["--disable-http2", "--disable-quic"], run: (c) => one(c, c.site.url) },
  h2: { flags: () => ["--disable-quic"], run: (c) => one(c, c.site.url) },
  h3: {
    flags: (s) => ["--enable-quic", `--origin-to-force-quic-on=a.test:${s.port},b.test:${s.port}`],
    run: (c) => one(c, c.site.url),
  },
  redirect: { flags: () => ["--disable-quic"], run: (c) => one(c, `${c.site.origin}/old`) },
  // the visual metrics (src/visual/): the test page over h2, its painted frames as histograms
  visual: { flags: () => ["--disable-quic"], run: (c) => one(c, c.site.url), visual: true },
  warm: {
    flags: () => ["--disable-quic"],
    run: async (c) => [await c.nav(c.site.url), await c.nav(c.site.url)],
  },
  failed: { flags: () => ["--disable-quic"], run: (c) => one(c, `${c.site.url}?fail`) },
  aborted: {
    flags: () => ["--disable-quic"],
    run: async (c) => {
      // slow the first load so a second navigation replaces it before its load event
      await c.cdp.send("Network.emulateNetworkConditions", {
        offline: false, latency: 150, downloadThroughput: 40_000, uploadThroughput: 40_000,
      }, c.session);
      await c.cdp.send("Page.navigate", { url: c.site.url }, c.session);
      await sleep(700);
      await c.cdp.send("Network.emulateNetworkConditions", {
        offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1,
      }, c.session);
      return [{ url: c.site.url, timing: {} }, await c.nav(`${c.site.url}?second`)];
    },
  },
  // Late attach (src/cdp/late.ts): the tab navigates (driven from another session, like a user
  // typing into a tab the extension cannot attach to) and the recorder's session enables its
  // domains only once the navigation is under way, as chrome.debugger attached at
  // onBeforeNavigate (or at the commit, for a chrome://newtab tab) does.
  "late-response": {
    flags: () => ["--disable-quic"], late: true,
    run: async (c) => {
      // On loopback the response beats any attach (measured: the document's responseReceived is
      // missed); 150 ms of emulated latency, set from the driver's session, stands for a real
      // link's round trip. Page.navigate answers only at the commit: the recorder enables its
      // domains as soon as the driver sees the document's request.
      let sent = false;
      c.cdp.onEvent((ev) => {
        if (ev.sessionId === c.driver && ev.method === "Network.requestWillBeSent" &&
            (ev.params as { type?: string }).type === "Document") sent = true;
      });
      await c.cdp.send("Network.enable", {}, c.driver);
      await c.cdp.send("Network.emulateNetworkConditions", {
        offline: false, latency: 150, downloadThroughput: -1, uploadThroughput: -1,
      }, c.driver);
      const navigated = c.cdp.send("Page.navigate", { url: c.site.url }, c.driver);
      for (let i = 0; i < 200 && !sent; i++) await sleep(5);
      await c.enable();
      await navigated;
      return [await c.settle(c.site.url)];
    },
  },
  "late-commit": { flags: () => ["--disable-quic"], late: true, committed: true, run: (c) => joinAtCommit(c, c.site.url) },
};

/** The driver navigates to `url`; the recorder's session enables its domains once the page has
 * committed (everyday recording's attach at webNavigation.onCommitted). */
async function joinAtCommit(c: Ctx, url: string): Promise<NavMeta[]> {
  await c.cdp.send("Page.enable", {}, c.driver);
  let committed = false;
  c.cdp.onEvent((ev) => {
    if (ev.sessionId === c.driver && ev.method === "Page.frameNavigated") committed = true;
  });
  await c.cdp.send("Page.navigate", { url }, c.driver);
  for (let i = 0; i < 200 && !committed; i++) await sleep(5);
  await c.enable();
  return [await c.settle(url)];
}

// The real-web site's behaviours (scripts/devkit/realweb.py), one fixture each, named rw-*: the
// recorder core replays them in unit tests; what it gets wrong is listed in the lead's work list.
const H2 = (): string[] => ["--disable-quic"];
const rw = (path: string): Scenario => ({ flags: H2, realweb: true, run: (c) => one(c, `${c.site.origin}${path}`) });
const evaluate = (c: Ctx, expression: string): Promise<unknown> =>
  c.cdp.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, c.session);
/** A real-web page, then a click on its link `#next`: the page it leads to is recorded too. */
const clickNext = (path: string, next: string): Scenario => ({
  flags: H2, realweb: true,
  run: async (c) => {
    const first = await c.nav(`${c.site.origin}${path}`);
    await evaluate(c, "document.getElementById('next').click(), true");
    return [first, await c.settle(`${c.site.origin}${next}`)];
  },
});
const SW_READY = `Promise.race([navigator.serviceWorker.ready.then(() => true),
  new Promise((done) => setTimeout(() => done(window.swError || 'not ready in 10 s'), 10000))])`;
/** The real-web pages recorded as one plain load each: scenario -> path. */
const RW_PAGES: Record<string, string> = {
  "rw-console-quiet": "/console/quiet.html", "rw-console-noisy": "/console/noisy.html", "rw-frame": "/frame/",
  "rw-workers": "/workers/", "rw-stream": "/stream/", "rw-redirect-script": "/redir/script.html",
  "rw-redirect-meta": "/redir/meta.html", "rw-redirect-chain": "/redir/chain", "rw-early-hints": "/hints/",
  "rw-misc": "/misc/", "rw-soft": "/spa/", "rw-state": "/state/", "rw-window-stop": "/stop/",
  "rw-download": "/download/", "rw-errors": "/errors/", "rw-fonts": "/fonts/", "rw-poll": "/poll/",
};
Object.assign(SCENARIOS, {
  ...Object.fromEntries(Object.entries(RW_PAGES).map(([name, path]) => [name, rw(path)])),
  // /workers/ joined at its commit: its workers' script requests (loaderId "") can come before
  // the replayed commit (everyday recording made no record of the page until 2026-11-29)
  "rw-late-workers": { flags: H2, realweb: true, late: true, committed: true,
    run: (c) => joinAtCommit(c, `${c.site.origin}/workers/`) },
  // /workers/ over HTTP/1.1, where a response's head counts its header lines alone: the worker's
  // script ends with its head's count (late.ts workerScriptBytes), its body not counted
  "rw-workers-h1": {
    flags: () => ["--disable-http2", "--disable-quic"], realweb: true, run: (c) => one(c, `${c.site.origin}/workers/`),
  },
  "rw-sw": {
    flags: H2, realweb: true,
    run: async (c) => {
      const sw = `https://f.test:${c.site.port}/sw/`;
      const first = await c.nav(sw);
      await evaluate(c, SW_READY);
      return [first, await c.nav(sw)];
    },
  },
  "rw-http-to-https": {
    flags: H2, realweb: true, run: (c) => one(c, `http://a.test:${String(c.site.httpPort)}/redir/plain.html`),
  },
  "rw-cache": {
    flags: H2, realweb: true,
    run: async (c) => [await c.nav(`${c.site.origin}/cache/`), await c.nav(`${c.site.origin}/cache/`),
      await c.nav(`https://d.test:${c.site.port}/altsvc/`), await c.nav(`${c.site.origin}/cache/`)],
  },
  // QUIC forced on a, b, c.test only: d.test is left to its Alt-Svc header
  "rw-altsvc": {
    flags: (s) => ["--enable-quic", `--origin-to-force-quic-on=${["a", "b", "c"].map((h) => `${h}.test:${s.port}`).join(",")}`],
    realweb: true, run: (c) => one(c, `https://d.test:${c.site.port}/altsvc/`),
  },
  "rw-bfcache": {
    flags: H2, realweb: true,
    run: async (c) => {
      const one_ = await c.nav(`${c.site.origin}/bf/one.html`);
      const two = await c.nav(`${c.site.origin}/bf/two.html`);
      await evaluate(c, "history.back(), true");
      await sleep(3000);
      return [one_, two, { url: `${c.site.origin}/bf/one.html`, timing: {} }];
    },
  },
  "rw-user-stop": {
    flags: H2, realweb: true,
    run: async (c) => {
      await c.cdp.send("Page.navigate", { url: `${c.site.origin}/hang/` }, c.session);
      await sleep(1500);
      await c.cdp.send("Page.stopLoading", {}, c.session);
      return [await c.settle(`${c.site.origin}/hang/`)];
    },
  },
  // the load event never comes: the log ends 5 s in (the recorder's own cap is 120 s)
  "rw-no-load": {
    flags: H2, realweb: true,
    run: async (c) => {
      await c.cdp.send("Page.navigate", { url: `${c.site.origin}/hang/` }, c.session);
      await sleep(5000);
      return [{ url: `${c.site.origin}/hang/`, timing: {} }];
    },
  },
  // a page that never stops moving, with paint capture on: its frames keep coming after load
  "rw-animation": { ...rw("/anim/"), visual: true },
  // a speculation rule's prerender, which Chromium makes a prefetch while DevTools is attached
  // (PrerenderingDisabledByDevTools), then a click to the prefetched page: recorded from its start
  "rw-prefetch": { ...clickNext("/prerender/", "/prerender/next.html"), preloading: true },
  // a page that sends a beacon and a keepalive fetch at pagehide (analytics' last moment), then a
  // click to the next page: the two go while next.html loads, after the first page's record
  "rw-unload": clickNext("/unload/", "/unload/next.html"),
  // objects sent with Cache-Control: no-cache, loaded three times: the later loads revalidate
  // them (If-None-Match), and the server answers 304 Not Modified
  "rw-reval": {
    flags: H2, realweb: true,
    run: async (c) => [await c.nav(`${c.site.origin}/reval/`), await c.nav(`${c.site.origin}/reval/`),
      await c.nav(`${c.site.origin}/reval/`)],
  },
} satisfies Record<string, Scenario>);

async function one(c: Ctx, url: string): Promise<NavMeta[]> {
  return [await c.nav(url)];
}

async function startRealweb(work: string): Promise<{ site: Site; proc: ChildProcess }> {
  const proc = spawn(join(ROOT, ".venv/bin/python"), ["-m", "scripts.devkit.realweb"], {
    cwd: work, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, PYTHONPATH: ROOT },
  });
  if (!proc.stdout) throw new Error("realweb.py: no stdout");
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const url = String((await lines.next()).value);
  const spki = String((await lines.next()).value);
  const httpPort = Number((await lines.next()).value);
  const port = Number(new URL(url).port);
  return { site: { url, spki, port, origin: `https://a.test:${port}`, httpPort }, proc };
}

async function startSite(work: string): Promise<{ site: Site; proc: ChildProcess }> {
  const proc = spawn(join(ROOT, ".venv/bin/python"), [join(ROOT, "scripts/devkit/site.py")], {
    cwd: work, stdio: ["ignore", "pipe", "inherit"],
  });
  if (!proc.stdout) throw new Error("site.py: no stdout");
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const url = String((await lines.next()).value);
  const spki = String((await lines.next()).value);
  const port = Number(new URL(url).port);
  return { site: { url, spki, port, origin: `https://a.test:${port}` }, proc };
}

async function launch(work: string, site: Site, extra: string[], preloading = false): Promise<{ proc: ChildProcess; ws: string; version: string }> {
  const profile = join(work, "profile");
  mkdirSync(join(profile, "Default"), { recursive: true });
  // no preconnect / prediction: connection setup stays visible (docs/ARCHITECTURE.md)
  writeFileSync(join(profile, "Default/Preferences"), JSON.stringify(preloading ? {} : { net: { network_prediction_options: 2 } }));
  const env = { ...process.env, HOME: work, XDG_CONFIG_HOME: join(work, ".config"),
    XDG_CACHE_HOME: join(work, ".cache"), XDG_DATA_HOME: join(work, ".local/share") };
  const args = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    `--user-data-dir=${profile}`, "--remote-debugging-port=0",
    "--host-resolver-rules=MAP *.test 127.0.0.1",
    `--ignore-certificate-errors-spki-list=${site.spki}`, ...extra, "about:blank",
  ];
  const proc = spawn("/usr/bin/chromium", args, { env, stdio: "ignore" });
  const portFile = join(profile, "DevToolsActivePort");
  for (let i = 0; i < 200 && !existsSync(portFile); i++) await sleep(50);
  const [port, path] = readFileSync(portFile, "utf8").split("\n");
  const ws = `ws://127.0.0.1:${port}${path}`;
  const info = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as { Browser: string };
  return { proc, ws, version: info.Browser };
}

async function record(name: string, scenario: Scenario): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), `protolens-fx-${name}-`));
  const { site, proc: siteProc } = await (scenario.realweb === true ? startRealweb(work) : startSite(work));
  const flags = scenario.flags(site);
  const { proc: browser, ws, version } = await launch(work, site, flags, scenario.preloading === true);
  const cdp = await CdpClient.connect(ws);
  try {
    const { targetId } = await cdp.send<{ targetId: string }>("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await cdp.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
    const { sessionId: driver } = await cdp.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
    const sessions = new Set([sessionId]);
    const events: RawEvent[] = [];
    let lastNetwork = Date.now();
    let loaded = false;
    // the extension's session core, with the tab's own session as chrome.debugger's {tabId}
    const tab = new TabSession({
      source: "lab", urlDetail: "full", newId: () => "fixture", mainFrameId: targetId, visual: scenario.visual === true,
      env: { browser: { name: "Chromium", version }, extension_version: "fixture", network: null },
    }, (ev) => events.push(ev));
    const io: FlowIo = {
      send: (method, params, child) => cdp.send(method, params, child ?? sessionId),
      sleep: async (ms) => { await sleep(ms); },
      // the extension decodes with Chromium's own decoder (src/adapters/frame-decode.ts); node has
      // none, so here jpeg-js, the decoder Lighthouse's speedline uses (core/lib/frame.js)
      decode: (data) => Promise.resolve(histogramOf(jpeg.decode(Buffer.from(data, "base64"), { useTArray: true }).data)),
      records: () => undefined,
    };
    const run = (flow: Parameters<typeof runFlow>[0]): Promise<void> =>
      runFlow(flow, io).catch((e: unknown) => console.warn(`${name}: session`, e));
    // listeners first, then enable (events during Network.enable must not be lost)
    cdp.onEvent((wire) => {
      if (wire.sessionId === undefined || !sessions.has(wire.sessionId)) return;
      if (wire.method === "Target.attachedToTarget") sessions.add((wire.params as { sessionId: string }).sessionId);
      if (wire.method.startsWith("Network.")) lastNetwork = Date.now();
      if (wire.method === "Page.loadEventFired" && wire.sessionId === sessionId) loaded = true;
      const ev = (wire.sessionId === sessionId ? { method: wire.method, params: wire.params } : wire) as RawEvent;
      void run(tab.onEvent(ev));
    });
    // where the attach's relays were asked for (session.test.ts replays afterAttach there): the
    // raw events logged before it
    let attachedAt: number | null = null;
    const enable = async (): Promise<void> => {
      await runFlow(tab.enable(), io);
      attachedAt = events.length;
      await run(tab.afterAttach(scenario.committed === true));
    };
    if (!scenario.late) await enable();
    const nav = async (url: string): Promise<NavMeta> => {
      loaded = false;
      await cdp.send("Page.navigate", { url }, sessionId);
      return settle(url);
    };
    const settle = async (url: string): Promise<NavMeta> => {
      for (let i = 0; i < 600 && !loaded; i++) await sleep(50);
      // at most 10 s: an open EventSource or WebSocket never lets the network go quiet
      const quietBy = Date.now() + 10_000;
      while (Date.now() - lastNetwork < QUIET_MS && Date.now() < quietBy) await sleep(100);
      const res = await cdp.send<{ result: { value: string } }>("Runtime.evaluate", {
        expression: "JSON.stringify({...performance.getEntriesByType('navigation')[0].toJSON(), timeOrigin: performance.timeOrigin})",
        returnByValue: true,
      }, sessionId);
      // the page's own LCP (startTime, ms after timeOrigin), the ground truth for milestones.lcp_ms
      const lcp = await cdp.send<{ result: { value: number | null } }>("Runtime.evaluate", {
        expression: `new Promise((done) => {
          setTimeout(() => done(null), 1000);
          new PerformanceObserver((l) => done(l.getEntries().at(-1).startTime))
            .observe({ type: "largest-contentful-paint", buffered: true });
        })`,
        awaitPromise: true, returnByValue: true,
      }, sessionId);
      const timing = JSON.parse(res.result.value) as Record<string, unknown>;
      return { url, timing: { ...timing, largestContentfulPaint: lcp.result.value } };
    };
    const navigations = await scenario.run({ site, cdp, session: sessionId, nav, enable, driver, settle });
    const shrink = (evs: RawEvent[]): RawEvent[] => scenario.realweb === true ? minifyRealweb(evs, sessionId) : minify(evs, sessionId);
    const kept = shrink(events);
    writeFileSync(join(OUT, `${name}.jsonl`), kept.map((e) => JSON.stringify(e)).join("\n") + "\n");
    // the tab's target id is its main frame's id, which the adapter passes the recorder
    const meta = { scenario: name, browser: version, flags, port: site.port, mainFrameId: targetId, navigations,
      ...(scenario.late === true && scenario.committed === true && attachedAt !== null
        ? { after_attach_at: shrink(events.slice(0, attachedAt)).length } : {}) };
    writeFileSync(join(OUT, `${name}.meta.json`), JSON.stringify(meta, null, 2) + "\n");
    console.log(`${name}: ${kept.length} events (${events.length} raw), ${navigations.length} navigation(s)`);
  } finally {
    cdp.close();
    browser.kill("SIGTERM");
    siteProc.kill("SIGINT");
    await sleep(300);
    rmSync(work, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
mkdirSync(OUT, { recursive: true });
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  if (wanted.length === 0 || wanted.includes(name)) await record(name, scenario);
}
