/**
 * The dashboard page (extension/dashboard.html), the adapter around the pure modules: asks the
 * host for every page of each query, turns rows into chart data, draws with Chart.js. Every
 * string from the store reaches the DOM through textContent (or canvas text), never as markup.
 */
import {
  BarController, BarElement, CategoryScale, Chart, Legend, LineController, LineElement, LinearScale, PointElement, Tooltip,
} from "chart.js";
import { QueryPort } from "../adapters/dashboard-port.ts";
import { wallClockMs } from "../adapters/environment.ts";
import type { QueryName, QueryParams } from "../messages/protocol.ts";
import { domainBars, formatBytes, originChoices, pltLines, protocolBars } from "./chart-data.ts";
import { domainsConfig, pltConfig, protocolConfig } from "./chart-config.ts";
import { byId } from "../ui/dom.ts";
import { fetchAll, type Table } from "./paging.ts";
import { PERIODS, periodOf, sinceMs } from "./period.ts";
import { domainRows, pltRows, protocolCounts, type PltRow } from "./rows.ts";

Chart.register(BarController, BarElement, CategoryScale, Legend, LineController, LineElement, LinearScale, PointElement, Tooltip);

const port = new QueryPort();
const charts = new Map<string, { destroy: () => void }>();
/** Rows per reply; `?limit=N` in the page URL makes small pages (the e2e test follows cursors). */
const limit = Number(new URLSearchParams(location.search).get("limit") ?? "") || undefined;
let pages = 0;

function cell(tag: "td" | "th", text: string, cls = ""): HTMLTableCellElement {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

async function all(query: QueryName, params: QueryParams): Promise<Table> {
  return fetchAll(async (cursor) => {
    pages += 1;
    return port.ask(query, params, cursor, limit);
  });
}

/** Replaces the chart on canvas `id` (Chart.js needs the old one destroyed first). */
function draw(id: string, make: (canvas: HTMLCanvasElement) => { destroy: () => void }): void {
  charts.get(id)?.destroy();
  charts.set(id, make(byId(id, HTMLCanvasElement)));
}

function drawPlt(rows: PltRow[], origin: string | null): void {
  const lines = pltLines(rows, origin);
  draw("chart-plt", (c) => new Chart(c, pltConfig(lines)));
}

function fillOrigins(rows: PltRow[]): void {
  const select = byId("origin", HTMLSelectElement);
  const all = new Option("all domains", "");
  select.replaceChildren(all, ...originChoices(rows).map((o) => new Option(o, o)));
  select.onchange = () => drawPlt(rows, select.value === "" ? null : select.value);
}

function fillTable(rows: ReturnType<typeof domainRows>): void {
  const body = byId("domains-body", HTMLTableSectionElement);
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    tr.append(cell("td", r.origin, "origin"), cell("td", String(r.navigations), "num"),
      cell("td", String(r.connections), "num"), cell("td", String(r.requests), "num"), cell("td", formatBytes(r.bytes), "num"));
    return tr;
  }));
}

function setState(state: "loading" | "ready" | "empty" | "error", status: string): void {
  document.body.dataset.state = state;
  byId("status", HTMLElement).textContent = status;
  byId("empty", HTMLElement).hidden = state !== "empty";
  byId("charts", HTMLElement).hidden = state !== "ready";
}

async function load(params: QueryParams): Promise<void> {
  setState("loading", "Asking the ProtoLens host…");
  pages = 0;
  try {
    const counts = protocolCounts(await all("protocol_counts", params));
    const bars = protocolBars(counts);
    if (bars.total === 0) {
      setState("empty", "");
      return;
    }
    const plt = pltRows(await all("plt_by_domain", params));
    const domains = domainRows(await all("domains", params));
    setState("ready", `${bars.total} navigations · ${domains.length} domains · ${pages} replies from the host`);
    draw("chart-protocols", (c) => new Chart(c, protocolConfig(bars)));
    fillOrigins(plt);
    drawPlt(plt, null);
    const d = domainBars(domains);
    draw("chart-domains", (c) => new Chart(c, domainsConfig(d)));
    byId("domains-note", HTMLElement).textContent = d.more > 0 ? `Chart: the ${d.origins.length} domains with most bytes; all ${domains.length} below.` : "";
    fillTable(domains);
    document.body.dataset.pages = String(pages);
  } catch (e) {
    setState("error", `Could not read your history from the ProtoLens host: ${e instanceof Error ? e.message : String(e)}. ` +
      "Is it installed (protolens install; protolens doctor)?");
  }
}

const sourceSelect = byId("source", HTMLSelectElement);
const periodSelect = byId("period", HTMLSelectElement);
periodSelect.replaceChildren(...Object.entries(PERIODS).map(([value, p]) => new Option(p.label, value)));
const sourceOf = (v: string): NonNullable<QueryParams["source"]> => (v === "lab" || v === "all" || v === "experiment" ? v : "passive");
const reload = (): Promise<void> =>
  load({ source: sourceOf(sourceSelect.value), since_ms: sinceMs(periodOf(periodSelect.value), wallClockMs()) });
sourceSelect.onchange = () => void reload();
periodSelect.onchange = () => void reload();
void reload();
