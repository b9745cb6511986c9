/**
 * Holds a log's records against its raw events' own account (raw-reader.ts): per navigation with
 * a load event, each request hop sent before it, whether the record of that navigation has it,
 * and where it does, whether protocol, connection id and encoded bytes agree.
 */
import type { NavigationRecord, RequestEntry } from "../../src/record/types.ts";
import type { TruthHop, TruthNavigation } from "./raw-reader.ts";

export interface HopCheck {
  hop: TruthHop;
  entry: RequestEntry | null;
  /** the fields that differ: protocol, connection, bytes (bytes only when the log has them) */
  differ: string[];
}

export interface NavCheck { nav: TruthNavigation; record: NavigationRecord | null; hops: HopCheck[] }

/** The record of `nav`: the one whose requests hold its main document's first hop. */
export function recordOf(nav: TruthNavigation, records: readonly NavigationRecord[]): NavigationRecord | null {
  const doc = nav.hops[0];
  return records.find((r) => r.requests.some((q) => q.is_main_document && doc !== undefined && q.request_id === doc.id && q.url === doc.url)) ?? null;
}

export function check(navs: readonly TruthNavigation[], records: readonly NavigationRecord[]): NavCheck[] {
  return navs.filter((n) => n.load !== null).map((nav) => {
    const record = recordOf(nav, records);
    const byId = new Map((record?.requests ?? []).map((q) => [`${q.request_id} ${q.url}`, q]));
    const hops = nav.hops.map((hop): HopCheck => {
      const entry = byId.get(`${hop.id} ${hop.url}`) ?? null;
      const differ: string[] = [];
      if (entry !== null) {
        if (entry.protocol !== hop.protocol) differ.push("protocol");
        if (entry.connection_id !== hop.connection) differ.push("connection");
        if (hop.bytes !== null && entry.encoded_bytes !== hop.bytes) differ.push("bytes");
      }
      return { hop, entry, differ };
    });
    return { nav, record, hops };
  });
}

export interface Tally { before: number; recorded: number; protocol: number; connection: number; bytes: number; bytesKnown: number }

export function tally(checks: readonly NavCheck[]): Tally {
  const hops = checks.flatMap((c) => c.hops);
  const rec = hops.filter((h) => h.entry !== null);
  return {
    before: hops.length,
    recorded: rec.length,
    protocol: rec.filter((h) => !h.differ.includes("protocol")).length,
    connection: rec.filter((h) => !h.differ.includes("connection")).length,
    bytes: rec.filter((h) => h.hop.bytes !== null && !h.differ.includes("bytes")).length,
    bytesKnown: rec.filter((h) => h.hop.bytes !== null).length,
  };
}
