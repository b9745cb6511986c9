/** The popup's contribution line (docs/COLLECTOR.md): on or off, the last upload, new loads. */
import { contributeStatus } from "../adapters/contribute-port.ts";
import { contributeLine } from "../contribute/status.ts";
import { byId } from "./dom.ts";

export async function showContribution(): Promise<void> {
  const line = byId("contribution", HTMLElement);
  try {
    line.textContent = contributeLine(await contributeStatus());
  } catch {
    line.textContent = "contributing: host not reachable";
  }
}
