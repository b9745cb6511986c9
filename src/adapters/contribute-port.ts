/**
 * Adapter: the options page's and the popup's own native port for the contribution messages
 * (docs/COLLECTOR.md). One request, one reply matched by `msg_id`, validated by parseHostMessage;
 * the port closes after the reply (the host process of the service worker runs the schedule).
 */
import { MSG_SCHEMA, parseHostMessage, type ExtensionMsg } from "../messages/protocol.ts";
import type { ContributeStatus } from "../contribute/status.ts";
import { HOST_NAME } from "./host-port.ts";

const REPLY_TIMEOUT_MS = 15_000;

export type ContributeSettingsIn = { enabled: boolean; url: string; token: string };

function ask(msg: ExtensionMsg & { msg_id: string }): Promise<ContributeStatus> {
  return new Promise((resolve, reject) => {
    const port = chrome.runtime.connectNative(HOST_NAME);
    const timer = setTimeout(() => { port.disconnect(); reject(new Error("no reply from the host")); }, REPLY_TIMEOUT_MS);
    const done = (): void => { clearTimeout(timer); port.disconnect(); };
    port.onMessage.addListener((raw: unknown) => {
      try {
        const m = parseHostMessage(raw);
        if (m.type === "contribute_status" && m.msg_id === msg.msg_id) { done(); resolve(m); }
        if (m.type === "error" && m.msg_id === msg.msg_id) { done(); reject(new Error(m.error)); }
      } catch (e) {
        done();
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    port.onDisconnect.addListener(() => {
      clearTimeout(timer);
      reject(new Error(chrome.runtime.lastError?.message ?? "the host closed the connection"));
    });
    port.postMessage(msg);
  });
}

export const contributeStatus = (): Promise<ContributeStatus> =>
  ask({ type: "contribute_status", schema: MSG_SCHEMA, msg_id: `c-${Date.now()}` });

export const saveContribute = (settings: ContributeSettingsIn): Promise<ContributeStatus> =>
  ask({ type: "contribute_settings", schema: MSG_SCHEMA, msg_id: `c-${Date.now()}`, settings });
