/**
 * A minimal DevTools Protocol client over the browser WebSocket (flattened sessions), for
 * scripts/record-fixtures.ts only. The extension itself uses chrome.debugger, which delivers the
 * same events with the tab's own sessionId left out.
 */
import WebSocket from "ws";

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
export type WireEvent = { method: string; params: unknown; sessionId?: string };

export class CdpClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners: ((ev: WireEvent) => void)[] = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data: WebSocket.RawData) => {
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as Uint8Array).toString("utf8");
      const msg = JSON.parse(text) as {
        id?: number; result?: unknown; error?: { message: string };
        method?: string; params?: unknown; sessionId?: string;
      };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(msg.error.message));
        else p?.resolve(msg.result);
      } else if (msg.method !== undefined) {
        const ev: WireEvent = { method: msg.method, params: msg.params ?? {} };
        if (msg.sessionId !== undefined) ev.sessionId = msg.sessionId;
        for (const l of this.listeners) l(ev);
      }
    });
  }

  static async connect(url: string): Promise<CdpClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new CdpClient(ws);
  }

  onEvent(listener: (ev: WireEvent) => void): void {
    this.listeners.push(listener);
  }

  send<T = unknown>(method: string, params: object = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    const msg: Record<string, unknown> = { id, method, params };
    if (sessionId !== undefined) msg.sessionId = sessionId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject });
      this.ws.send(JSON.stringify(msg));
    });
  }

  close(): void {
    this.ws.close();
  }
}
