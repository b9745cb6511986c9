/**
 * Adapter: what the record says about the browser and the network (navigator), read once.
 */
import type { RecordEnv } from "../cdp/build-record.ts";
import type { NetworkInfo } from "../record/types.ts";

interface UAData { getHighEntropyValues(hints: string[]): Promise<{ fullVersionList?: { brand: string; version: string }[] }> }
interface Conn { effectiveType?: string; rtt?: number; downlink?: number }
type Nav = { userAgentData?: UAData; connection?: Conn; userAgent: string };

export async function browserInfo(): Promise<RecordEnv["browser"]> {
  const nav = navigator as unknown as Nav;
  const list = (await nav.userAgentData?.getHighEntropyValues(["fullVersionList"]).catch(() => null))?.fullVersionList ?? [];
  const brand = list.find((b) => b.brand === "Google Chrome") ?? list.find((b) => b.brand === "Chromium");
  if (brand) return { name: brand.brand, version: brand.version };
  const m = /Chrome\/([\d.]+)/.exec(nav.userAgent);
  return { name: "Chromium", version: m?.[1] ?? "unknown" };
}

export function networkInfo(): NetworkInfo | null {
  const c = (navigator as unknown as Nav).connection;
  if (c === undefined) return null;
  return { effective_type: c.effectiveType ?? null, rtt_ms: c.rtt ?? null, downlink_mbps: c.downlink ?? null };
}

/** The wall clock, for pages whose pure parts take time as an argument (STYLE.md rule zero). */
export function wallClockMs(): number {
  return Date.now();
}
