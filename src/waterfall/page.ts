/**
 * The waterfall page (extension/waterfall.html?tab=ID), the adapter around series.ts: reads the
 * tab's last record from the extension's own session storage (adapters/tab-view.ts; no host round
 * trip) and draws one row per connection with DOM elements. Strings from the page reach the DOM
 * through textContent only.
 */
import { readLast } from "../adapters/tab-view.ts";
import type { NavigationRecord } from "../record/types.ts";
import { byId, el } from "../ui/dom.ts";
import { waterfallSeries, type Waterfall, type WfBar } from "./series.ts";

const pct = (ms: number, end: number): string => `${end > 0 ? (100 * ms) / end : 0}%`;

function drawBar(b: WfBar, end: number, upstream: boolean): HTMLElement {
  const span = el("div", "", `wf-bar${b.failed ? " failed" : ""}${upstream ? " upstream" : ""}`);
  span.style.left = pct(b.startMs, end);
  span.style.width = pct(Math.max(b.endMs - b.startMs, end / 1000), end);
  const first = b.firstByteMs === null ? null : Math.min(Math.max(b.firstByteMs, b.startMs), b.endMs);
  if (first !== null) {
    // waiting (start -> first byte) is the light part, receiving the solid part; the tick is the first byte
    const wait = el("div", "", "wf-wait");
    wait.style.width = b.endMs > b.startMs ? `${(100 * (first - b.startMs)) / (b.endMs - b.startMs)}%` : "0%";
    const tick = el("div", "", "wf-first-byte");
    tick.style.left = wait.style.width;
    span.append(wait, tick);
  }
  span.title = `${b.host} ${Math.round(b.startMs)}-${Math.round(b.endMs)} ms`;
  if (b.setup === null) return span;
  // the connection's set-up (DNS + TCP + TLS, or the QUIC handshake), drawn on its own behind the bar
  const [from, to] = b.setup;
  const setup = el("div", "", "wf-setup");
  setup.style.left = pct(from, end);
  setup.style.width = pct(Math.max(to - from, 0), end);
  setup.title = `${b.host} connection set-up ${Math.round(to - from)} ms`;
  const both = el("div", "", "wf-bar-group");
  both.append(setup, span);
  return both;
}

export function draw(root: HTMLElement, wf: Waterfall): void {
  const end = Math.max(wf.endMs * 1.03, 1);
  root.replaceChildren(el("h1", wf.title, "wf-title"));
  const chart = el("div", "", "wf-chart");
  const axis = el("div", "", "wf-axis");
  const step = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000].find((s) => end / s <= 10) ?? 20000;
  for (let t = 0; t <= end; t += step) {
    const tick = el("span", `${t} ms`, "wf-tick");
    tick.style.left = pct(t, end);
    axis.append(tick);
  }
  chart.append(el("div", "", "wf-label"), axis);
  let group: string | null = null;
  for (const row of wf.rows) {
    const line = el("div", "", `wf-row ${row.protocol}${row.group !== group && group !== null ? " wf-group" : ""}`);
    group = row.group;
    line.dataset.key = row.key;
    const track = el("div", "", "wf-track");
    for (const b of row.bars) track.append(drawBar(b, end, row.upstream));
    line.append(el("div", row.label, "wf-label"), track);
    chart.append(line);
  }
  const overlay = el("div", "", "wf-milestones");
  for (const [name, t] of wf.milestones) {
    const m = el("div", "", `wf-milestone ${name.toLowerCase()}`);
    m.style.left = pct(t, end);
    m.append(el("span", `${name} ${Math.round(t)} ms`));
    overlay.append(m);
  }
  chart.append(overlay);
  root.append(chart);
}

async function main(): Promise<void> {
  const root = byId("waterfall", HTMLElement);
  const asked = new URLSearchParams(location.search).get("tab");
  const raw = asked !== null && /^\d{1,10}$/.test(asked) ? await readLast(Number(asked)) : null;
  // records in session storage were written by this extension's worker from its own recorder
  if (raw === null || typeof raw !== "object") {
    root.replaceChildren(el("p", "No navigation recorded in this tab yet.", "muted"));
    return;
  }
  draw(root, waterfallSeries(raw as NavigationRecord));
  document.body.dataset.ready = "1";
}

void main();
