/** The popup: the current tab's last navigation and the recording switch. */
import { outboxStatus } from "../adapters/outbox-store.ts";
import { loadSettings, saveSettings } from "../adapters/settings-store.ts";
import { activeTabId, labState, readLast } from "../adapters/tab-view.ts";
import { renderPause } from "./pause-control.ts";
import { popupModel } from "./popup-model.ts";
import { byId, el } from "./dom.ts";
import { showContribution } from "./popup-contribute.ts";
import type { NavigationRecord } from "../record/types.ts";

async function render(): Promise<void> {
  const settings = await loadSettings();
  const lab = await labState();
  const toggle = byId("recording", HTMLInputElement);
  toggle.checked = settings.enabled || lab.lab;
  toggle.disabled = lab.lab;
  byId("mode", HTMLElement).textContent = lab.lab ? "lab profile: recording set by the host" : "";
  toggle.onchange = () => void saveSettings({ ...settings, enabled: toggle.checked });
  await renderPause(lab.lab);

  // popup.html?tab=ID shows that tab (the popup opened as a page, e.g. tests/e2e/test_ui_e2e.py)
  const asked = new URLSearchParams(location.search).get("tab");
  const tabId = asked !== null && /^\d{1,10}$/.test(asked) ? Number(asked) : await activeTabId();
  const raw = tabId === null ? null : await readLast(tabId);
  const waterfall = byId("waterfall", HTMLAnchorElement);  // the same tab's last load as a waterfall
  waterfall.href = `waterfall.html?tab=${tabId ?? ""}`;
  waterfall.hidden = raw === null || typeof raw !== "object";
  const view = byId("last", HTMLElement);
  view.replaceChildren();
  // records in session storage were written by this extension's worker from its own recorder
  if (raw === null || typeof raw !== "object") {
    view.append(el("p", "No navigation recorded in this tab yet.", "muted"));
  } else {
    const m = popupModel(raw as NavigationRecord);
    view.append(el("div", m.url, "url"), el("div", `PLT ${m.plt} · main document ${m.mainFamily}`, "plt"));
    if (m.note) view.append(el("div", m.note, "muted"));
    const hosts = el("ul", "", "hosts");
    for (const h of m.hosts) {
      const li = el("li");
      li.append(el("span", h.badge, `badge ${h.badge.toLowerCase()}`), el("span", ` ${h.host} (${h.connections} conn)`));
      hosts.append(li);
    }
    const bars = el("div", "", "bars");
    for (const b of m.bars) {
      const row = el("div", "", "bar-row");
      const bar = el("div", "", `bar ${b.family ?? "none"}`);
      bar.style.width = `${b.widthPct}%`;
      // the grey track is 100 %: a bar's length reads as its share at a glance
      const track = el("div", "", "track");
      track.append(bar);
      row.append(el("div", `${b.label} · ${b.sharePct}`, "bar-label"), track);
      bars.append(row);
    }
    view.append(el("h2", "Hosts"), hosts, el("h2", "Connections by byte share"), bars);
  }
  const s = await outboxStatus();
  byId("outbox", HTMLElement).textContent =
    `host ${lab.host ?? "not connected"} · waiting ${s.waiting} · acked ${s.acked} · dropped ${s.droppedFull + s.droppedInvalid}`;
}

void render();
void showContribution();
