/**
 * Normalizes CDP's raw Response.protocol strings to a family (docs/RECORD.md): the raw string is
 * kept as well, since Chromium reports many spellings (docs/ARCHITECTURE.md, "Chromium facts").
 */
import type { Family } from "../record/types.ts";

export function familyOf(protocol: string | null | undefined): Family | null {
  if (!protocol) return null;
  const p = protocol.toLowerCase();
  if (p === "http/1.0" || p === "http/1.1" || p === "http/0.9") return "h1";
  if (p === "h2" || p === "h2c") return "h2";
  if (p.startsWith("h3") || p.startsWith("http/2+quic") || p.startsWith("hq") || p.startsWith("quic")) {
    return "h3";
  }
  return null;
}
