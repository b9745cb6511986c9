/**
 * Per-domain policies in the everyday browser (docs/POLICY.md). Pure: the rules
 * of the host's `policies` message, matching a host (most specific rule wins, as
 * native-host/protolens/policy/rules.py), the PAC script that routes `no-h3` domains through the
 * host's CONNECT relay (Chromium never uses QUIC through an HTTP proxy: docs/ARCHITECTURE.md, verified),
 * and the CDP `Network.emulateNetworkConditionsByRule` conditions for rules with latency/throughput.
 */
import type { Protocol } from "devtools-protocol";

export type { PolicyRule, PolicySet, RelayInfo, RuleKind } from "../messages/policies.ts";
import type { PolicyRule, PolicySet, RuleKind } from "../messages/policies.ts";

export const NO_POLICIES: PolicySet = { rules: [], relay: null };

export function ruleMatches(rule: PolicyRule, rawHost: string): boolean {
  const host = rawHost.toLowerCase().replace(/\.$/, "");
  switch (rule.kind) {
    case "exact":
      return host === rule.domain;
    case "wildcard":
      return host.endsWith(rule.domain.slice(1));
    case "registrable":
      return host === rule.domain || host.endsWith(`.${rule.domain}`);
  }
}

const RANK: Record<RuleKind, number> = { exact: 2, wildcard: 1, registrable: 0 };

/** Higher wins: exact > wildcard > registrable, then the longer pattern. */
function specificity(r: PolicyRule): [number, number] {
  return [RANK[r.kind], r.domain.length];
}

function moreSpecific(a: PolicyRule, b: PolicyRule): boolean {
  const [ka, la] = specificity(a);
  const [kb, lb] = specificity(b);
  return ka > kb || (ka === kb && la > lb);
}

/** The most specific rule covering `host`, or null. */
export function matchRule(rules: readonly PolicyRule[], host: string): PolicyRule | null {
  let best: PolicyRule | null = null;
  for (const r of rules) if (ruleMatches(r, host) && (best === null || moreSpecific(r, best))) best = r;
  return best;
}

/** Rules most specific first (CDP: "if multiple entries match a request, the first entry wins"). */
export function bySpecificity(rules: readonly PolicyRule[]): PolicyRule[] {
  return [...rules].sort((a, b) => (moreSpecific(a, b) ? -1 : moreSpecific(b, a) ? 1 : a.domain.localeCompare(b.domain)));
}

const SAFE_DOMAIN = /^(\*\.)?[a-z0-9.-]+$/;

/**
 * The PAC script for `chrome.proxy.settings` (mode `pac_script`): hosts whose most specific rule
 * is `no-h3` go through the relay on `port`, everything else DIRECT (no relay, `port` null: all
 * DIRECT). Same meaning as `matchRule` and as the host's `protolens/policy/pac.py`, checked case by
 * case against tests/cases/pac.json (docs/ARCHITECTURE.md, "The no-h3 PAC script"). Domain names
 * are validated by the host (letters, digits, `-`, `.`), and re-checked here because they end up
 * inside script source.
 */
export function pacScript(port: number | null, rules: readonly PolicyRule[]): string {
  const relay = port === null ? null : `"PROXY 127.0.0.1:${port}"`;
  const ordered = relay === null ? [] : bySpecificity(rules).filter((r) => SAFE_DOMAIN.test(r.domain));
  const lines = ordered.map((r) => {
    const d = r.domain;
    const test = r.kind === "exact" ? `h == "${d}"`
      : r.kind === "wildcard" ? `dnsDomainIs(h, "${d.slice(1)}")`
        : `(h == "${d}" || dnsDomainIs(h, ".${d}"))`;
    return `  if (${test}) return ${r.arm === "no-h3" && relay !== null ? relay : `"DIRECT"`};\n`;
  });
  // a fully qualified name ("a.test.") matches as without the dot, as in matchRule
  return `function FindProxyForURL(url, host) {\n  var h = host.toLowerCase().replace(/\\.$/, "");\n${lines.join("")}  return "DIRECT";\n}\n`;
}

/** Domains the PAC sends to the relay (for the options page and tests). */
export function relayedRules(rules: readonly PolicyRule[]): PolicyRule[] {
  return rules.filter((r) => r.arm === "no-h3");
}

/** URLPattern strings (https://urlpattern.spec.whatwg.org/) for a rule; any scheme and port. */
export function urlPatterns(r: PolicyRule): string[] {
  if (r.kind === "exact") return [`*://${r.domain}:*/*`];
  if (r.kind === "wildcard") return [`*://${r.domain}:*/*`];
  return [`*://${r.domain}:*/*`, `*://*.${r.domain}:*/*`];
}

export interface Throttling {
  conditions: Protocol.Network.NetworkConditions[];
  /** conditions[i] comes from the rule with pattern owners[i]. */
  owners: string[];
}

/** CDP conditions for the rules with latency or throughput, most specific rule first. */
export function throttling(rules: readonly PolicyRule[]): Throttling {
  const conditions: Protocol.Network.NetworkConditions[] = [];
  const owners: string[] = [];
  for (const r of bySpecificity(rules)) {
    if (r.latency_ms === null && r.throughput_kbps === null) continue;
    // CDP: throughput in bytes/s, -1 disables; kbit/s * 1000 / 8
    const down = r.throughput_kbps === null ? -1 : (r.throughput_kbps * 1000) / 8;
    for (const urlPattern of urlPatterns(r)) {
      conditions.push({ urlPattern, latency: r.latency_ms ?? 0, downloadThroughput: down, uploadThroughput: -1 });
      owners.push(r.domain);
    }
  }
  return { conditions, owners };
}
