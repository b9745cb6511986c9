/**
 * Adapter: the native-messaging port to the host (org.protolens.host, docs/MESSAGES.md).
 * Says hello on every connect, validates every incoming message, reconnects with backoff when the
 * host goes away (1 s doubling to 10 s). An open port also keeps the MV3 service worker alive.
 */
import { backoffMs } from "../outbox/outbox.ts";
import { MSG_SCHEMA, MessageError, parseHostMessage, type ExtensionMsg, type HostMsg } from "../messages/protocol.ts";

export const HOST_NAME = "org.protolens.host";

export class HostLink {
  private port: chrome.runtime.Port | null = null;
  private failures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  /** True between the host's hello reply and the next disconnect. */
  ready = false;

  constructor(
    private readonly onMessage: (m: HostMsg) => void,
    private readonly onDown: () => void,
  ) {}

  connect(): void {
    if (this.port !== null) return;
    if (this.retryTimer !== null) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const port = chrome.runtime.connectNative(HOST_NAME);
    this.port = port;
    port.onMessage.addListener((raw: unknown) => {
      let m: HostMsg;
      try {
        m = parseHostMessage(raw);
      } catch (e) {
        console.warn(`protolens: ignored host message: ${e instanceof MessageError ? e.message : String(e)}`);
        return;
      }
      if (m.type === "hello") {
        this.ready = true;
        this.failures = 0;
      }
      this.onMessage(m);
    });
    port.onDisconnect.addListener(() => {
      const why = chrome.runtime.lastError?.message ?? "disconnected";
      console.warn(`protolens: host port closed: ${why}`);
      this.port = null;
      this.ready = false;
      this.failures += 1;
      this.onDown();
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.connect();
      }, backoffMs(this.failures - 1));
    });
    this.send({
      type: "hello", schema: MSG_SCHEMA, extension_version: chrome.runtime.getManifest().version,
      extension_id: chrome.runtime.id,
    });
  }

  /** False when there is no port (the caller keeps the message and retries later). */
  send(m: ExtensionMsg): boolean {
    if (this.port === null) return false;
    try {
      this.port.postMessage(m);
      return true;
    } catch {
      return false;
    }
  }
}
