/**
 * Real-user A/B experiments (docs/POLICY.md). Pure: a volunteer enrols domains; the n-th
 * navigation to an enrolled domain gets arm `armAt(seed, domain, n)`. Arms come in blocks of one
 * of each arm, in an order shuffled per (seed, domain, block), so after every block each arm has
 * been used equally often and within a block the order is random (permuted-block randomization).
 * The state (seed, domains, per-domain counts) lives in chrome.storage (adapters/experiment-store).
 * Only arms possible in an everyday browser: `default` (no policy) and `no-h3` (via the relay).
 */

export const EXPERIMENT_ARMS = ["default", "no-h3"] as const;
export type ExperimentArm = (typeof EXPERIMENT_ARMS)[number];
export const EXPERIMENT_NAME = "everyday-no-h3";

export interface ExperimentState {
  name: string;
  /** 32-bit seed drawn once at enrolment. */
  seed: number;
  /** Enrolled domains, normalized; each covers its subdomains. */
  domains: string[];
  /** Navigations recorded so far per domain (the index of the next one). */
  counts: Record<string, number>;
}

/** FNV-1a, 32 bit: a stable hash of the block's coordinates. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: a small seeded PRNG, values in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The shuffled order of `arms` for one block (Fisher-Yates). */
export function blockOrder<A extends string>(seed: number, domain: string, block: number, arms: readonly A[]): A[] {
  const rnd = mulberry32(fnv1a(`${seed >>> 0}\u001f${domain}\u001f${block}`));
  const out = [...arms];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as A, out[i] as A];
  }
  return out;
}

/** The arm of the n-th (0-based) navigation to `domain`. */
export function armAt<A extends string>(seed: number, domain: string, n: number, arms: readonly A[]): A {
  const order = blockOrder(seed, domain, Math.floor(n / arms.length), arms);
  return order[n % arms.length] as A;
}

export function normalizeDomain(text: string): string | null {
  const d = text.trim().toLowerCase().replace(/^\*\./, "").replace(/\.$/, "");
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(d) ? d : null;
}

export function newExperiment(seed: number): ExperimentState {
  return { name: EXPERIMENT_NAME, seed: seed >>> 0, domains: [], counts: {} };
}

export function enrol(s: ExperimentState, text: string): ExperimentState {
  const d = normalizeDomain(text);
  if (d === null || s.domains.includes(d)) return s;
  return { ...s, domains: [...s.domains, d].sort() };
}

export function unenrol(s: ExperimentState, domain: string): ExperimentState {
  const counts = Object.fromEntries(Object.entries(s.counts).filter(([d]) => d !== domain));
  return { ...s, domains: s.domains.filter((d) => d !== domain), counts };
}

/** The enrolled domain covering `host` (the longest one), or null. */
export function enrolledDomain(s: ExperimentState | null, host: string): string | null {
  if (s === null) return null;
  const h = host.toLowerCase();
  let best: string | null = null;
  for (const d of s.domains) if ((h === d || h.endsWith(`.${d}`)) && (best === null || d.length > best.length)) best = d;
  return best;
}

/** The arm the next navigation to `domain` gets (what the PAC currently applies to it). */
export function pendingArm(s: ExperimentState, domain: string): ExperimentArm {
  return armAt(s.seed, domain, s.counts[domain] ?? 0, EXPERIMENT_ARMS);
}

/** After a navigation to `domain` was recorded under its pending arm. */
export function advance(s: ExperimentState, domain: string): ExperimentState {
  return { ...s, counts: { ...s.counts, [domain]: (s.counts[domain] ?? 0) + 1 } };
}

/**
 * An enrolled domain's arm as the browser applies it (the worker's view of its proxy settings):
 * `arm` null while a switch is being applied (or failed), `since` the wall-clock ms it took effect.
 */
export interface ArmInEffect { arm: ExperimentArm | null; since: number }

/** Each enrolled domain's arm under proxy settings built for `s` (no-h3 needs the relay's PAC). */
export function armsApplied(s: ExperimentState | null, pacInstalled: boolean): Map<string, ExperimentArm> {
  const out = new Map<string, ExperimentArm>();
  for (const d of s?.domains ?? []) {
    const arm = pendingArm(s as ExperimentState, d);
    out.set(d, arm === "no-h3" && !pacInstalled ? "default" : arm);
  }
  return out;
}

/**
 * True when a navigation that started at `startedAtMs` (wall clock) ran under `arm` throughout:
 * that arm was in effect before it started and has not been switched since. A load overlapping a
 * switch (the user navigated before the previous load's record advanced the arm, another tab's
 * record did, the PAC was not set yet) mixes both arms and is no observation of either.
 */
export function ranUnder(e: ArmInEffect | undefined, arm: ExperimentArm, startedAtMs: number): boolean {
  return e !== undefined && e.arm === arm && e.since <= startedAtMs;
}

/** Stored JSON -> state, or null (not enrolled / malformed). */
export function parseExperiment(v: unknown): ExperimentState | null {
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.name !== "string" || typeof o.seed !== "number" || !Array.isArray(o.domains)) return null;
  const domains = o.domains.filter((d): d is string => typeof d === "string" && normalizeDomain(d) === d);
  const counts: Record<string, number> = {};
  const raw = typeof o.counts === "object" && o.counts !== null ? (o.counts as Record<string, unknown>) : {};
  for (const d of domains) {
    const n = raw[d];
    counts[d] = typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : 0;
  }
  return { name: o.name, seed: o.seed >>> 0, domains, counts };
}
