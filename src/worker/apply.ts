/**
 * Applying the everyday-browser policies (docs/POLICY.md), one application at a time, so which
 * arm is in effect for each enrolled domain follows the order the proxy settings were set in
 * (src/experiment/assign.ts ArmInEffect). Pure: `begin` asks for the proxy settings, `done`
 * takes their outcome; a request made while one runs is merged into the next application.
 */
import { armsApplied, type ArmInEffect, type ExperimentState } from "../experiment/assign.ts";
import { effectiveRules } from "../policy/applied.ts";
import type { PolicyRule, PolicySet } from "../policy/ruleset.ts";

/** What follows an application: re-check which tabs to attach (an enrolment changed), start the
 * lab's navigations (the host's policies arrived). */
export interface ApplyReason { sync: boolean; lab: boolean }

export interface Application extends ApplyReason {
  /** The enrolment and rules this application installs. */
  exp: ExperimentState | null;
  rules: PolicyRule[];
}

export interface ApplyState {
  running: Application | null;
  next: ApplyReason | null;
}

export const IDLE_APPLY: ApplyState = { running: null, next: null };

export function merge(a: ApplyReason | null, b: ApplyReason): ApplyReason {
  return a === null ? b : { sync: a.sync || b.sync, lab: a.lab || b.lab };
}

/**
 * Starts an application: the enrolled domains whose arm is about to change have no arm in effect
 * until the new settings are set (a load overlapping the switch is no observation of either arm).
 */
export function begin(
  reason: ApplyReason, policies: PolicySet, exp: ExperimentState | null,
  inEffect: ReadonlyMap<string, ArmInEffect>, now: number,
): { app: Application; inEffect: Map<string, ArmInEffect> } {
  const rules = effectiveRules(policies.rules, exp);
  const before = armsApplied(exp, true);
  const next = new Map(inEffect);
  for (const d of next.keys()) if (!before.has(d)) next.delete(d);
  for (const [d, arm] of before) if (next.get(d)?.arm !== arm) next.set(d, { arm: null, since: now });
  return { app: { ...reason, exp, rules }, inEffect: next };
}

/** The proxy settings were set (`pac`: with or without the PAC) or failed (null). */
export function done(
  app: Application, pac: boolean | null, inEffect: ReadonlyMap<string, ArmInEffect>, now: number,
): Map<string, ArmInEffect> {
  const next = new Map(inEffect);
  if (pac === null) return next;
  for (const [d, arm] of armsApplied(app.exp, pac)) if (next.get(d)?.arm !== arm) next.set(d, { arm, since: now });
  return next;
}
