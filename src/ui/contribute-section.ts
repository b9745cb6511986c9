/** The options page's "Contribute to a study" section: collector URL, token, the switch, a preview
 * of what the next upload sends, and the date of the last contribution (docs/COLLECTOR.md). */
import { contributeStatus, saveContribute } from "../adapters/contribute-port.ts";
import { contributeLine, previewLines, type ContributeStatus } from "../contribute/status.ts";
import { byId } from "./dom.ts";

function show(s: ContributeStatus): void {
  byId("contrib-enabled", HTMLInputElement).checked = s.enabled;
  byId("contrib-url", HTMLInputElement).value = s.url;
  byId("contrib-token", HTMLInputElement).placeholder = s.token_set ? "(saved; type to replace)" : "plc_...";
  byId("contrib-last", HTMLElement).textContent = contributeLine(s);
  const list = byId("contrib-preview", HTMLUListElement);
  list.replaceChildren(...previewLines(s).map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

export async function initContribute(): Promise<void> {
  const status = byId("contrib-status", HTMLElement);
  const refresh = async (): Promise<void> => {
    try {
      show(await contributeStatus());
    } catch (e) {
      status.textContent = `Host: ${e instanceof Error ? e.message : String(e)}`;
    }
  };
  byId("contrib-save", HTMLButtonElement).onclick = () => {
    // an empty token keeps the saved one for the same collector (the host never sends it back)
    const token = byId("contrib-token", HTMLInputElement).value.trim();
    void saveContribute({
      enabled: byId("contrib-enabled", HTMLInputElement).checked,
      url: byId("contrib-url", HTMLInputElement).value.trim(), token,
    }).then((s) => { show(s); status.textContent = "Saved."; },
      (e: unknown) => { status.textContent = e instanceof Error ? e.message : String(e); });
  };
  await refresh();
}
