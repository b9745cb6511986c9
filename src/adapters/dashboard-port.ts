/**
 * Adapter: the dashboard page's own native port to the host (docs/MESSAGES.md, "`query`").
 * One request per `ask`, matched to its reply by `msg_id`; every reply is validated by
 * parseHostMessage. The port opens on the first ask and again after the host goes away.
 */
import { MSG_SCHEMA, MessageError, parseHostMessage, type ExtensionMsg, type HostMsgOf, type QueryName, type QueryParams } from "../messages/protocol.ts";
import { HOST_NAME } from "./host-port.ts";

const REPLY_TIMEOUT_MS = 30_000;

/** One page of a query's rows (src/dashboard/paging.ts follows the cursor). */
export type QueryPage = Pick<HostMsgOf<"query_result">, "columns" | "rows" | "next_cursor">;

interface Pending {
  resolve: (m: HostMsgOf<"query_result">) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class QueryPort {
  private port: chrome.runtime.Port | null = null;
  private readonly pending = new Map<string, Pending>();
  private seq = 0;

  private open(): chrome.runtime.Port {
    if (this.port !== null) return this.port;
    const port = chrome.runtime.connectNative(HOST_NAME);
    port.onMessage.addListener((raw: unknown) => {
      let m;
      try {
        m = parseHostMessage(raw);
      } catch (e) {
        console.warn(`protolens dashboard: ignored host message: ${e instanceof MessageError ? e.message : String(e)}`);
        return;
      }
      if (m.type !== "query_result" && m.type !== "error") return;
      const p = m.msg_id === null ? undefined : this.pending.get(m.msg_id);
      if (p === undefined || m.msg_id === null) return;
      this.pending.delete(m.msg_id);
      clearTimeout(p.timer);
      if (m.type === "query_result") p.resolve(m);
      else p.reject(new Error(`host: ${m.error}`));
    });
    port.onDisconnect.addListener(() => {
      const why = chrome.runtime.lastError?.message ?? "the host closed the connection";
      this.port = null;
      this.failAll(why);
    });
    this.port = port;
    return port;
  }

  private failAll(why: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
      this.pending.delete(id);
    }
  }

  /** One page of `query` from `cursor` (null: the first page); `limit` rows at most. */
  ask(query: QueryName, params: QueryParams, cursor: string | null, limit?: number): Promise<QueryPage> {
    const msgId = `dash-${++this.seq}`;
    return new Promise<HostMsgOf<"query_result">>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(msgId);
        reject(new Error(`no reply from the host within ${REPLY_TIMEOUT_MS / 1000} s`));
      }, REPLY_TIMEOUT_MS);
      this.pending.set(msgId, { resolve, reject, timer });
      try {
        const msg: ExtensionMsg = { type: "query", schema: MSG_SCHEMA, msg_id: msgId, query, params, cursor, ...(limit ? { limit } : {}) };
        this.open().postMessage(msg);
      } catch (e) {
        this.failAll(e instanceof Error ? e.message : String(e));
      }
    });
  }
}
