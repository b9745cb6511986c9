/**
 * What the popup shows for a record, pure: PLT, a protocol badge per host, one bar per connection
 * sized by its byte share (as Fig. 4c of the IFIP'18 paper, shared/seeds/000). Every string here
 * may come from a page: the view sets it with textContent only.
 */
import type { Family, NavigationRecord } from "../record/types.ts";

export interface Bar { label: string; host: string; family: Family | null; widthPct: number; sharePct: string }
export interface PopupModel {
  url: string;
  plt: string;
  mainFamily: string;
  hosts: { host: string; badge: string; connections: number }[];
  bars: Bar[];
  note: string;
}

const kb = (n: number): string => (n >= 1024 * 1024 ? `${(n / 1048576).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`);
export const familyLabel = (f: Family | null | undefined): string => (f ? f.toUpperCase() : "?");

export function popupModel(r: NavigationRecord): PopupModel {
  const main = r.requests.filter((q) => q.is_main_document).pop();
  const bars = [...r.connections]
    .sort((a, b) => b.share - a.share)
    .map((c, i) => ({
      label: `#${i + 1} ${c.host} ${familyLabel(c.family)} ${c.requests} req ${kb(c.bytes)}`,
      host: c.host, family: c.family, widthPct: Math.max(0, Math.min(100, c.share * 100)),
      sharePct: `${(c.share * 100).toFixed(1)}%`,
    }));
  const notes: string[] = [];
  if (r.page.aborted) notes.push("aborted before load");
  if (r.page.error) notes.push(r.page.error);
  if (r.page.warm) notes.push("warm (cache or reused connection)");
  return {
    url: r.page.url,
    plt: r.milestones.load_ms === null ? "no load event" : `${Math.round(r.milestones.load_ms)} ms`,
    mainFamily: familyLabel(main?.family),
    hosts: r.hosts.map((h) => ({ host: h.host, badge: h.families.map(familyLabel).join("/") || "cache", connections: h.connections })),
    bars,
    note: notes.join("; "),
  };
}
