/** The options page: opt in, scope (all / allowlist / denylist), URL detail. */
import { outboxStatus } from "../adapters/outbox-store.ts";
import { loadSettings, saveSettings } from "../adapters/settings-store.ts";
import { parseHostList, parseSettings, type Scope } from "../policy/settings.ts";
import { isUrlDetail } from "../policy/url-detail.ts";
import { byId } from "./dom.ts";

async function init(): Promise<void> {
  const s = await loadSettings();
  const enabled = byId("enabled", HTMLInputElement);
  const scope = byId("scope", HTMLSelectElement);
  const allow = byId("allowlist", HTMLTextAreaElement);
  const deny = byId("denylist", HTMLTextAreaElement);
  const detail = byId("detail", HTMLSelectElement);
  enabled.checked = s.enabled;
  scope.value = s.scope;
  allow.value = s.allowlist.join("\n");
  deny.value = s.denylist.join("\n");
  detail.value = s.urlDetail;
  byId("save", HTMLButtonElement).onclick = () => {
    const next = parseSettings({
      enabled: enabled.checked, scope: scope.value as Scope, allowlist: parseHostList(allow.value),
      denylist: parseHostList(deny.value), urlDetail: isUrlDetail(detail.value) ? detail.value : "origin",
    });
    void saveSettings(next).then(() => { byId("status", HTMLElement).textContent = "Saved."; });
  };
  const o = await outboxStatus();
  byId("outbox", HTMLElement).textContent =
    `Outbox: ${o.waiting} waiting for the host, ${o.acked} stored, ${o.droppedFull} dropped (outbox full), ${o.droppedInvalid} rejected as invalid.`;
}

void init();
