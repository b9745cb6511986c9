/**
 * Connections and hosts of a record, derived from its requests (docs/RECORD.md): one connection
 * per distinct CDP connectionId that carried a response (cache hits carry none), with its share of
 * the bytes and its set-up (from the request that opened it); per host, the distinct connections
 * and the protocol families seen.
 */
import type { ConnectionEntry, Family, HostEntry, RequestEntry } from "../record/types.ts";

export function connectionsOf(requests: readonly RequestEntry[]): ConnectionEntry[] {
  const byId = new Map<number, ConnectionEntry>();
  for (const r of requests) {
    if (r.connection_id === null) continue;
    const end = r.end_ms ?? r.first_byte_ms ?? r.start_ms;
    const c = byId.get(r.connection_id);
    if (c === undefined) {
      byId.set(r.connection_id, {
        connection_id: r.connection_id, host: r.host, family: r.family,
        remote_ip: r.remote_ip, remote_port: r.remote_port, requests: 1, bytes: r.encoded_bytes,
        share: 0, first_ms: r.start_ms, last_ms: end, upstream: false,
        setup_ms: null, dns_ms: null, connect_ms: null, tls_ms: null,
      });
    } else {
      c.requests += 1;
      c.bytes += r.encoded_bytes;
      c.first_ms = Math.min(c.first_ms, r.start_ms);
      c.last_ms = Math.max(c.last_ms, end);
    }
  }
  const conns = [...byId.values()];
  for (const c of conns) Object.assign(c, setupOf(requests, c.connection_id));
  const total = conns.reduce((s, c) => s + c.bytes, 0);
  for (const c of conns) c.share = total > 0 ? c.bytes / total : 0;
  return conns;
}

export function hostsOf(requests: readonly RequestEntry[]): HostEntry[] {
  const hosts = new Map<string, { conns: Set<number>; families: Set<Family> }>();
  for (const r of requests) {
    if (r.host === "") continue;
    let h = hosts.get(r.host);
    if (h === undefined) {
      h = { conns: new Set(), families: new Set() };
      hosts.set(r.host, h);
    }
    if (r.connection_id !== null) h.conns.add(r.connection_id);
    if (r.family !== null) h.families.add(r.family);
  }
  return [...hosts.entries()].map(([host, h]) => ({
    host, connections: h.conns.size, families: [...h.families].sort(),
  }));
}

type Setup = Pick<ConnectionEntry, "setup_ms" | "dns_ms" | "connect_ms" | "tls_ms">;

/** The set-up of connection `id`: the phases of the first request that opened it (not reused,
 * with a connect phase). Chromium may open a connection for one request and hand it to another
 * (preconnect, a race): the phases are the opener's either way. */
function setupOf(requests: readonly RequestEntry[], id: number): Setup {
  let opener: RequestEntry | null = null;
  for (const r of requests) {
    if (r.connection_id !== id || r.connection_reused !== false || r.connect_ms == null) continue;
    if (opener === null || r.start_ms < opener.start_ms) opener = r;
  }
  if (opener === null || opener.connect_ms == null) return { setup_ms: null, dns_ms: null, connect_ms: null, tls_ms: null };
  const dns = opener.dns_ms ?? null;
  return {
    setup_ms: Math.round(((dns ?? 0) + opener.connect_ms) * 1000) / 1000,
    dns_ms: dns, connect_ms: opener.connect_ms, tls_ms: opener.tls_ms ?? null,
  };
}
