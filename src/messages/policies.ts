/**
 * The host's `policies` message body (docs/MESSAGES.md): its types, and its validation where it
 * enters the extension (called by parseHostMessage; throws with the first bad field named).
 * What the rules mean (matching, PAC, throttling) is src/policy/ruleset.ts, a layer above.
 */
export type RuleKind = "exact" | "wildcard" | "registrable";

export interface PolicyRule {
  /** Normalized pattern: `a.test` (registrable: itself and subdomains), `www.a.test`, `*.a.test`. */
  domain: string;
  kind: RuleKind;
  /** `no-h3`, `default`, or an arm only a lab profile can apply (`h1`, `h2-parallel:2` ...). */
  arm: string;
  latency_ms: number | null;
  throughput_kbps: number | null;
}

export interface RelayInfo { host: string; port: number; username: string; password: string }

export interface PolicySet { rules: PolicyRule[]; relay: RelayInfo | null }

export class PolicyMessageError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const KINDS: readonly RuleKind[] = ["exact", "wildcard", "registrable"];
const DOMAIN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const ARM = /^(h1|h2|h3|no-h3|default|h2-parallel:[1-8])$/;

function optNum(o: Obj, k: string, path: string, max: number): number | null {
  const v = o[k] ?? null;
  if (v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > max) {
    throw new PolicyMessageError(`${path}.${k}: expected a number from 0 to ${max} or null`);
  }
  return v;
}

function parseRule(v: unknown, path: string): PolicyRule {
  if (!isObj(v)) throw new PolicyMessageError(`${path}: expected an object`);
  const { domain, kind, arm } = v;
  if (typeof domain !== "string" || !DOMAIN.test(domain)) throw new PolicyMessageError(`${path}.domain: expected a host name pattern`);
  if (typeof kind !== "string" || !KINDS.includes(kind as RuleKind)) throw new PolicyMessageError(`${path}.kind: expected exact, wildcard or registrable`);
  if ((kind === "wildcard") !== domain.startsWith("*.")) throw new PolicyMessageError(`${path}.kind: does not fit the domain`);
  if (typeof arm !== "string" || !ARM.test(arm)) throw new PolicyMessageError(`${path}.arm: unknown arm`);
  return {
    domain, kind: kind as RuleKind, arm,
    latency_ms: optNum(v, "latency_ms", path, 60_000), throughput_kbps: optNum(v, "throughput_kbps", path, 10_000_000),
  };
}

function parseRelay(v: unknown): RelayInfo | null {
  if (v === null || v === undefined) return null;
  if (!isObj(v)) throw new PolicyMessageError("relay: expected an object or null");
  const { host, port, username, password } = v;
  if (host !== "127.0.0.1") throw new PolicyMessageError("relay.host: expected 127.0.0.1 (loopback only)");
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) throw new PolicyMessageError("relay.port: expected a port number");
  if (typeof username !== "string" || typeof password !== "string" || password === "") throw new PolicyMessageError("relay: expected username and password strings");
  return { host, port, username, password };
}

/** The `rules` and `relay` fields of a `policies` message. */
export function parsePolicySet(v: Obj): PolicySet {
  const rules = v.rules;
  if (!Array.isArray(rules)) throw new PolicyMessageError("rules: expected an array");
  return { rules: rules.map((r, i) => parseRule(r, `rules[${i}]`)), relay: parseRelay(v.relay) };
}
