/** The options page: opt in, scope (all / allowlist / denylist), URL detail, paint capture, the log tap, the hold. */
import { outboxStatus } from "../adapters/outbox-store.ts";
import { loadSettings, saveSettings } from "../adapters/settings-store.ts";
import { loadExperiment, saveExperiment } from "../adapters/experiment-store.ts";
import { enrol, newExperiment, normalizeDomain, pendingArm, unenrol, type ExperimentState } from "../experiment/assign.ts";
import { MAX_HOLD_S, parseHostList, parseSettings, readHold, type Scope } from "../policy/settings.ts";
import { isUrlDetail } from "../record/url-detail.ts";
import { byId } from "./dom.ts";
import { initContribute } from "./contribute-section.ts";

async function init(): Promise<void> {
  const s = await loadSettings();
  const enabled = byId("enabled", HTMLInputElement);
  const scope = byId("scope", HTMLSelectElement);
  const allow = byId("allowlist", HTMLTextAreaElement);
  const deny = byId("denylist", HTMLTextAreaElement);
  const detail = byId("detail", HTMLSelectElement);
  const visual = byId("visual", HTMLInputElement);
  const saveLog = byId("save-log", HTMLInputElement);
  const hold = byId("hold", HTMLInputElement);
  enabled.checked = s.enabled;
  hold.value = String(s.holdS);
  visual.checked = s.visual;
  saveLog.checked = s.saveLog;
  scope.value = s.scope;
  allow.value = s.allowlist.join("\n");
  deny.value = s.denylist.join("\n");
  detail.value = s.urlDetail;
  byId("save", HTMLButtonElement).onclick = () => {
    const holdS = readHold(hold.value);
    if (holdS === null) {
      byId("status", HTMLElement).textContent = `Not saved: keep reading a tab for 0 to ${MAX_HOLD_S} whole seconds.`;
      return;
    }
    const next = parseSettings({
      enabled: enabled.checked, scope: scope.value as Scope, allowlist: parseHostList(allow.value),
      denylist: parseHostList(deny.value), urlDetail: isUrlDetail(detail.value) ? detail.value : "origin",
      visual: visual.checked, saveLog: saveLog.checked, holdS,
    });
    void saveSettings(next).then(() => { byId("status", HTMLElement).textContent = "Saved."; });
  };
  const o = await outboxStatus();
  byId("outbox", HTMLElement).textContent =
    `Outbox: ${o.waiting} waiting for the host, ${o.acked} stored, ${o.droppedFull} dropped (outbox full), ${o.droppedInvalid} rejected as invalid.`;
}

/** The A/B section: enrolment, per-domain counts and next arm, leaving. */
async function initExperiment(): Promise<void> {
  let state = await loadExperiment();
  const list = byId("exp-domains", HTMLUListElement);
  const status = byId("exp-status", HTMLElement);
  const input = byId("exp-domain", HTMLInputElement);
  const save = async (next: ExperimentState | null): Promise<void> => {
    state = next !== null && next.domains.length === 0 ? null : next;
    await saveExperiment(state);
    render();
  };
  const render = (): void => {
    list.replaceChildren();
    byId("exp-leave", HTMLButtonElement).disabled = state === null;
    if (state === null) {
      status.textContent = "You are not enrolled.";
      return;
    }
    const s = state;
    status.textContent = `Enrolled in "${s.name}" with ${s.domains.length} domain(s):`;
    for (const d of s.domains) {
      const li = document.createElement("li");
      li.textContent = `${d}: ${s.counts[d] ?? 0} load(s) recorded, next arm ${pendingArm(s, d)} `;
      const rm = document.createElement("button");
      rm.textContent = "Remove";
      rm.onclick = () => void save(unenrol(s, d));
      li.append(rm);
      list.append(li);
    }
  };
  byId("exp-add", HTMLButtonElement).onclick = () => {
    const d = normalizeDomain(input.value);
    if (d === null) {
      status.textContent = `"${input.value}" is not a domain name (e.g. example.com).`;
      return;
    }
    // the seed is drawn once, at enrolment (experiment/assign.ts)
    const base = state ?? newExperiment(crypto.getRandomValues(new Uint32Array(1))[0] ?? 0);
    input.value = "";
    void save(enrol(base, d));
  };
  byId("exp-leave", HTMLButtonElement).onclick = () => void save(null);
  render();
}

void init();
void initExperiment();
void initContribute();
