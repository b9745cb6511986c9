/**
 * Chart data -> Chart.js configurations (pure; the page hands them to `new Chart`). Labels are
 * drawn as canvas text, so the host's strings never become markup. Animation is off: the page
 * is drawn once per query, and a screenshot right after shows the final chart.
 */
import type { ChartConfiguration } from "chart.js";
import { familyColor, type DomainBars, type PltLines, type ProtocolBars } from "./chart-data.ts";

const FAILED_COLOR = "#dc2626";

const axisTitle = (text: string) => ({ display: true, text, font: { weight: "bold" as const } });

/** One dataset per family (null outside its own bar) so the legend names each protocol. */
export function protocolConfig(d: ProtocolBars): ChartConfiguration<"bar", (number | null)[], string> {
  const ofFamily = (f: string) => d.families.map((g, i) => (g === f ? d.succeeded[i] ?? 0 : null));
  return {
    type: "bar",
    data: {
      labels: d.labels,
      datasets: [
        ...d.families.map((f, i) => ({
          label: d.labels[i] ?? f, data: ofFamily(f), backgroundColor: familyColor(f), stack: "n", skipNull: true,
        })),
        { label: "failed", data: d.failed, backgroundColor: FAILED_COLOR, stack: "n" },
      ],
    },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false,
      plugins: { legend: { position: "bottom" } },
      scales: {
        x: { stacked: true, title: axisTitle("main document protocol") },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: axisTitle("navigations (count)") },
      },
    },
  };
}

export function pltConfig(d: PltLines): ChartConfiguration<"line", (number | null)[], string> {
  return {
    type: "line",
    data: {
      labels: d.days,
      datasets: d.series.map((s) => ({
        label: s.label, data: s.values, borderColor: familyColor(s.family),
        backgroundColor: familyColor(s.family), spanGaps: true, pointRadius: 4, borderWidth: 2, tension: 0,
      })),
    },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false,
      plugins: { legend: { position: "bottom" } },
      scales: {
        x: { title: axisTitle("day (UTC)") },
        y: { beginAtZero: true, title: axisTitle("mean page load time (ms)") },
      },
    },
  };
}

export function domainsConfig(d: DomainBars): ChartConfiguration<"bar", number[], string> {
  return {
    type: "bar",
    data: {
      labels: d.labels,
      datasets: [
        { label: `bytes (${d.unit.unit})`, data: d.bytes, backgroundColor: "#6366f1", xAxisID: "bytes" },
        { label: "connections", data: d.connections, backgroundColor: "#f59e0b", xAxisID: "connections" },
      ],
    },
    options: {
      indexAxis: "y", animation: false, responsive: true, maintainAspectRatio: false,
      plugins: { legend: { position: "bottom" } },
      scales: {
        bytes: { type: "linear", position: "bottom", beginAtZero: true, title: axisTitle(`bytes on the wire (${d.unit.unit})`) },
        connections: {
          type: "linear", position: "top", beginAtZero: true, ticks: { precision: 0 },
          grid: { drawOnChartArea: false }, title: axisTitle("connections (count)"),
        },
      },
    },
  };
}
