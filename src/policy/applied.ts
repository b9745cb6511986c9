/**
 * What applied to each host of a recorded navigation (pure): the optional `policies` and
 * `experiment` fields of the NavigationRecord (docs/RECORD.md), stored by the host in
 * `navigation_policies`. Mechanism names follow native-host/protolens/policy/mechanism.py.
 */
import type { NavigationRecord } from "../record/types.ts";
import { enrolledDomain, pendingArm, ranUnder, type ArmInEffect, type ExperimentState } from "../experiment/assign.ts";
import { matchRule, type PolicyRule, type PolicySet } from "./ruleset.ts";

export interface AppliedPolicy {
  host: string;
  /** The matching rule's pattern (an enrolled experiment domain counts as a rule), or null. */
  rule: string | null;
  arm: string;
  /** relay | none | unsupported | unavailable (no relay), `+cdp-throttling` when shaping applied. */
  mechanism: string;
  /** CDP throttling rule ids Chromium reported as applied to this host's requests. */
  rule_ids: string[];
}

export interface ExperimentTag { name: string; arm: string }

/** A record with the optional fields this module fills. */
export type PolicyRecord = NavigationRecord & { policies?: AppliedPolicy[]; experiment?: ExperimentTag };

/** Stored rules with each enrolled domain's pending arm in place of any rule for that domain. */
export function effectiveRules(rules: readonly PolicyRule[], exp: ExperimentState | null): PolicyRule[] {
  if (exp === null || exp.domains.length === 0) return [...rules];
  const enrolled = new Set(exp.domains);
  return [
    ...rules.filter((r) => !enrolled.has(r.domain)),
    ...exp.domains.map((d): PolicyRule => ({ domain: d, kind: "registrable", arm: pendingArm(exp, d), latency_ms: null, throughput_kbps: null })),
  ];
}

export function mechanism(arm: string, relayOn: boolean, throttled: boolean): string {
  const base = arm === "no-h3" ? (relayOn ? "relay" : "unavailable") : arm === "default" ? "none" : "unsupported";
  return throttled ? `${base}+cdp-throttling` : base;
}

/** CDP requestId of a record's request_id (`<requestId>:<redirect hop>`). */
function cdpId(requestId: string): string {
  const i = requestId.lastIndexOf(":");
  return i < 0 ? requestId : requestId.slice(0, i);
}

/**
 * One entry per host of the record. `applied`: CDP requestId -> throttling rule id (from
 * Network.requestWillBeSentExtraInfo.appliedNetworkConditionsId); `throttledRules`: patterns whose
 * conditions were installed on the tab.
 */
export function appliedPolicies(
  record: NavigationRecord, rules: readonly PolicyRule[], set: PolicySet,
  applied: ReadonlyMap<string, string>, throttledRules: ReadonlySet<string>,
): AppliedPolicy[] {
  const idsByHost = new Map<string, Set<string>>();
  for (const r of record.requests) {
    const id = applied.get(cdpId(r.request_id));
    if (id === undefined) continue;
    const s = idsByHost.get(r.host) ?? new Set<string>();
    s.add(id);
    idsByHost.set(r.host, s);
  }
  const hosts = [...new Set([...record.hosts.map((h) => h.host), ...record.requests.map((r) => r.host)])].filter(Boolean).sort();
  return hosts.map((host) => {
    const rule = matchRule(rules, host);
    const ids = [...(idsByHost.get(host) ?? [])].sort();
    const throttled = rule !== null && throttledRules.has(rule.domain);
    return {
      host, rule: rule?.domain ?? null, arm: rule?.arm ?? "default",
      mechanism: mechanism(rule?.arm ?? "default", set.relay !== null, throttled), rule_ids: ids,
    };
  });
}

/** The page's host (from its origin), or "". */
export function pageHost(record: NavigationRecord): string {
  try {
    return new URL(record.page.origin).hostname;
  } catch {
    return "";
  }
}

/**
 * The record as sent to the host: `policies` when any rule or experiment is active, and for a
 * page on an enrolled domain (never in the lab) source `experiment` with its arm, when that arm
 * was in effect for the whole load (`inEffect`: enrolled domain -> the arm the browser applies).
 */
export function annotate(
  record: NavigationRecord, set: PolicySet, exp: ExperimentState | null, lab: boolean,
  applied: ReadonlyMap<string, string>, throttledRules: ReadonlySet<string>,
  inEffect: ReadonlyMap<string, ArmInEffect>,
): { record: PolicyRecord; enrolled: string | null } {
  const expOn = lab ? null : exp;
  const rules = effectiveRules(set.rules, expOn);
  if (rules.length === 0) return { record, enrolled: null };
  const out: PolicyRecord = { ...record, policies: appliedPolicies(record, rules, set, applied, throttledRules) };
  const domain = expOn === null ? null : enrolledDomain(expOn, pageHost(record));
  // an arm that could not be applied (no relay yet) is not an observation of that arm
  if (expOn !== null && domain !== null && pendingArm(expOn, domain) === "no-h3" && set.relay === null) {
    return { record: out, enrolled: null };
  }
  // a load that overlapped a switch of the domain's arm is no observation of either arm
  if (expOn !== null && domain !== null && !ranUnder(inEffect.get(domain), pendingArm(expOn, domain), record.page.started_at_ms)) {
    return { record: out, enrolled: null };
  }
  if (expOn !== null && domain !== null) {
    out.source = "experiment";
    out.experiment = { name: expOn.name, arm: pendingArm(expOn, domain) };
  }
  return { record: out, enrolled: domain };
}
