/**
 * The connection waterfall's rows, pure: a record in, one row per connection out. The same rows as
 * the host's `protolens plot waterfall` (native-host/protolens/plots/waterfall_series.py, kept in
 * step by tests/extension/waterfall-series.test.ts): grouped by host in order of the host's first
 * request, labelled with protocol, request count and byte share; each request a bar from start to
 * end with its first byte and, for the request that opened a connection, the connection's set-up;
 * cache hits on one row per host; a proxied lab load's upstream
 * connections after them, spanning their first to last use.
 */
import type { ConnectionEntry, NavigationRecord, RequestEntry } from "../record/types.ts";

/** `setup`: when the request opened its connection, the DNS + connect span it waited for (ms
 * from navigation start), placed back from its end by its phases (docs/RECORD.md "Timings"). */
export interface WfBar {
  requestId: string; startMs: number; firstByteMs: number | null; endMs: number; host: string; failed: boolean;
  setup: [number, number] | null;
}
export interface WfRow { key: string; group: string; label: string; protocol: string; requests: number; share: number; upstream: boolean; bars: WfBar[] }
export interface Waterfall { title: string; rows: WfRow[]; milestones: [string, number][]; endMs: number }

const MILESTONES = [["TTFB", "ttfb_ms"], ["FCP", "fcp_ms"], ["LCP", "lcp_ms"], ["load", "load_ms"]] as const;

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** The DNS + connect span of a request that opened its connection: send, wait and receive follow
 * each other up to its end, so the connection was ready at end - receive - wait - send. */
export function setupSpan(r: RequestEntry): [number, number] | null {
  if (r.connection_reused !== false || r.connect_ms == null || r.wait_ms == null || r.end_ms === null) return null;
  const ready = r.end_ms - (r.receive_ms ?? 0) - r.wait_ms - (r.send_ms ?? 0);
  return [round3(ready - r.connect_ms - (r.dns_ms ?? 0)), round3(ready)];
}

function bar(r: RequestEntry): WfBar {
  const end = r.end_ms ?? r.first_byte_ms ?? r.start_ms;
  return {
    requestId: r.request_id, startMs: r.start_ms, firstByteMs: r.first_byte_ms, endMs: Math.max(end, r.start_ms), host: r.host,
    failed: r.failed, setup: setupSpan(r),
  };
}

function label(hosts: string[], protocol: string, n: number, share: number | null): string {
  const coalesced = hosts.length > 1 ? " (coalesced)" : "";
  const tail = share === null ? "" : ` · ${(share * 100).toFixed(1)}%`;
  return `${hosts.join(", ")}${coalesced} · ${protocol} · ${n} req${tail}`;
}

function upstreamRow(c: ConnectionEntry): WfRow {
  const first = c.first_ms;
  const span: WfBar = {
    requestId: `upstream:${c.connection_id}`, startMs: first, firstByteMs: null, endMs: Math.max(first, c.last_ms), host: c.host,
    failed: false, setup: null,
  };
  const protocol = c.family ?? "?";
  return { key: `u${c.connection_id}`, group: c.host, label: `upstream ${label([c.host], protocol, c.requests, c.share)}`, protocol, requests: c.requests, share: c.share, upstream: true, bars: [span] };
}

export function waterfallSeries(rec: NavigationRecord): Waterfall {
  const ordered = [...rec.requests].sort((a, b) => a.start_ms - b.start_ms || (a.request_id < b.request_id ? -1 : a.request_id > b.request_id ? 1 : 0));
  const hostRank = new Map<string, number>();
  for (const r of ordered) if (!hostRank.has(r.host)) hostRank.set(r.host, hostRank.size);
  const conns = new Map(rec.connections.filter((c) => !c.upstream).map((c) => [c.connection_id, c] as const));
  const byRow = new Map<string, RequestEntry[]>();
  for (const r of ordered) {
    const key = r.connection_id === null ? `cache:${r.host}` : `c${r.connection_id}`;
    const list = byRow.get(key) ?? [];
    list.push(r);
    byRow.set(key, list);
  }
  const rows: WfRow[] = [];
  for (const [key, reqs] of byRow) {
    const first = reqs[0];
    if (first === undefined) continue;
    const hosts = [...new Set(reqs.map((r) => r.host))];
    if (key.startsWith("cache:")) {
      rows.push({ key, group: first.host, label: label([first.host], "cache", reqs.length, null), protocol: "cache", requests: reqs.length, share: 0, upstream: false, bars: reqs.map(bar) });
      continue;
    }
    const conn = conns.get(first.connection_id ?? -1);
    const protocol = conn?.family ?? reqs.find((r) => r.family !== null)?.family ?? "?";
    const share = conn?.share ?? 0;
    rows.push({ key, group: hosts[0] ?? first.host, label: label(hosts, protocol, reqs.length, share), protocol, requests: reqs.length, share, upstream: false, bars: reqs.map(bar) });
  }
  const rank = (row: WfRow): number => hostRank.get(row.group) ?? hostRank.size;
  rows.sort((a, b) => rank(a) - rank(b) || Number(a.key.startsWith("cache:")) - Number(b.key.startsWith("cache:")) || (a.bars[0]?.startMs ?? 0) - (b.bars[0]?.startMs ?? 0));
  const upstream = rec.connections.filter((c) => c.upstream).sort((a, b) => a.first_ms - b.first_ms || a.connection_id - b.connection_id);
  rows.push(...upstream.map(upstreamRow));
  const milestones: [string, number][] = [];
  for (const [name, key] of MILESTONES) {
    const v = rec.milestones[key];
    if (v !== null) milestones.push([name, v]);
  }
  const ends = [...rows.flatMap((row) => row.bars.map((b) => b.endMs)), ...milestones.map(([, t]) => t)];
  return { title: `${rec.page.url} (${rec.id.slice(0, 8)})`, rows, milestones, endMs: ends.length ? Math.max(...ends) : 0 };
}
