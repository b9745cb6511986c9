import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { matchRule, pacScript, throttling, urlPatterns, type PolicyRule } from "../../src/policy/ruleset.ts";
import { parseHostMessage, MessageError } from "../../src/messages/protocol.ts";

const rule = (domain: string, kind: PolicyRule["kind"], arm: string, latency: number | null = null): PolicyRule =>
  ({ domain, kind, arm, latency_ms: latency, throughput_kbps: null });

const RULES = [
  rule("a.test", "registrable", "no-h3"),
  rule("www.a.test", "exact", "default"),
  rule("*.cdn.b.test", "wildcard", "no-h3"),
  rule("c.test", "registrable", "h1", 300),
];

/**
 * Runs the generated PAC with the one PAC helper it uses, defined as Chromium's PAC runner defines
 * it (net/proxy_resolution/pac_js_library.h, `dnsDomainIs`).
 */
function route(pac: string, host: string, url = `https://${host}/`): string {
  const sandbox: Record<string, unknown> = {
    dnsDomainIs: (h: string, d: string) => h.length >= d.length && h.slice(h.length - d.length) === d,
  };
  runInNewContext(pac, sandbox);
  const find = sandbox.FindProxyForURL as (url: string, host: string) => string;
  return find(url, host);
}

/** tests/cases/pac.json: the cases the host's PAC generator answers too (tests/policy/test_pac.py). */
interface PacCase {
  name: string;
  relay: { port: number } | null;
  rules: { domain: string; kind: PolicyRule["kind"]; arm: string }[];
  routes: [url: string, host: string, want: string][];
}
const PAC_CASES = (JSON.parse(readFileSync(new URL("../cases/pac.json", import.meta.url), "utf8")) as { cases: PacCase[] }).cases;

describe("matchRule", () => {
  it("prefers exact, then wildcard, then registrable", () => {
    expect(matchRule(RULES, "www.a.test")?.arm).toBe("default");
    expect(matchRule(RULES, "img.a.test")?.domain).toBe("a.test");
    expect(matchRule(RULES, "A.TEST.")?.domain).toBe("a.test");
    expect(matchRule(RULES, "x.cdn.b.test")?.domain).toBe("*.cdn.b.test");
    expect(matchRule(RULES, "cdn.b.test")).toBeNull();
    expect(matchRule(RULES, "xa.test")).toBeNull();
  });
});

describe("pacScript", () => {
  const pac = pacScript(8853, RULES);
  it.each([
    ["a.test", "PROXY 127.0.0.1:8853"], ["img.a.test", "PROXY 127.0.0.1:8853"],
    ["www.a.test", "DIRECT"], ["x.cdn.b.test", "PROXY 127.0.0.1:8853"], ["cdn.b.test", "DIRECT"],
    ["b.test", "DIRECT"], ["c.test", "DIRECT"], ["evila.test", "DIRECT"], ["example.org", "DIRECT"],
  ])("%s -> %s", (host, want) => {
    expect(route(pac, host)).toBe(want);
  });
  it("agrees with matchRule on every host", () => {
    for (const h of ["a.test", "www.a.test", "q.www.a.test", "x.cdn.b.test", "c.test", "z.test"]) {
      expect(route(pac, h) !== "DIRECT").toBe(matchRule(RULES, h)?.arm === "no-h3");
    }
  });
  it("never puts a malformed domain into script source", () => {
    const evil = pacScript(1, [rule('a.test") || true || ("', "exact", "no-h3")]);
    expect(evil).not.toContain("true ||");
    expect(route(evil, "anything.org")).toBe("DIRECT");
  });
});

describe("pacScript on the shared cases (tests/cases/pac.json)", () => {
  it.each(PAC_CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const rules = c.rules.map((r) => rule(r.domain, r.kind, r.arm));
    const pac = pacScript(c.relay?.port ?? null, rules);
    for (const [url, host, want] of c.routes) {
      expect([url, route(pac, host, url)]).toEqual([url, want]);
      // the relay accepts exactly the hosts matchRule gives a no-h3 rule (host/relay.py)
      if (c.relay !== null) {
        expect(want !== "DIRECT").toBe(matchRule(rules, host)?.arm === "no-h3");
      }
    }
  });
});

describe("throttling", () => {
  it("builds CDP conditions for rules with latency/throughput only, most specific first", () => {
    const t = throttling([rule("a.test", "registrable", "default", 300), { ...rule("x.a.test", "exact", "no-h3"), throughput_kbps: 800 }, rule("b.test", "registrable", "no-h3")]);
    expect(t.owners).toEqual(["x.a.test", "a.test", "a.test"]);
    expect(t.conditions[0]).toEqual({ urlPattern: "*://x.a.test:*/*", latency: 0, downloadThroughput: 100_000, uploadThroughput: -1 });
    expect(t.conditions.slice(1).map((c) => [c.urlPattern, c.latency, c.downloadThroughput])).toEqual([
      ["*://a.test:*/*", 300, -1], ["*://*.a.test:*/*", 300, -1],
    ]);
  });
  it("patterns cover any scheme and port", () => {
    expect(urlPatterns(rule("*.a.test", "wildcard", "no-h3"))).toEqual(["*://*.a.test:*/*"]);
  });
});

describe("policies message", () => {
  const ok = {
    type: "policies", schema: 1, error: null,
    rules: [{ domain: "a.test", kind: "registrable", arm: "no-h3", latency_ms: 300, throughput_kbps: null }],
    relay: { host: "127.0.0.1", port: 4242, username: "protolens", password: "t" },
  };
  it("parses a valid message", () => {
    const m = parseHostMessage(ok);
    expect(m.type === "policies" && m.relay?.port === 4242 && m.rules[0]?.latency_ms === 300).toBe(true);
  });
  it.each([
    [{ rules: {} }, "rules: expected an array"],
    [{ rules: [{ ...ok.rules[0], domain: "a.test\";x" }] }, "rules[0].domain"],
    [{ rules: [{ ...ok.rules[0], kind: "wildcard" }] }, "rules[0].kind"],
    [{ rules: [{ ...ok.rules[0], arm: "h9" }] }, "rules[0].arm"],
    [{ rules: [{ ...ok.rules[0], latency_ms: -1 }] }, "rules[0].latency_ms"],
    [{ relay: { ...ok.relay, host: "10.0.0.1" } }, "relay.host"],
    [{ relay: { ...ok.relay, port: 0 } }, "relay.port"],
    [{ relay: { ...ok.relay, password: "" } }, "relay: expected"],
    [{ error: 3 }, "error: expected"],
  ])("rejects %j", (patch, msg) => {
    expect(() => parseHostMessage({ ...ok, ...patch })).toThrow(MessageError);
    expect(() => parseHostMessage({ ...ok, ...patch })).toThrow(msg);
  });
});
