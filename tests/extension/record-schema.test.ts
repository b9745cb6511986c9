/**
 * The NavigationRecord contract (schema/navigation-record.schema.json, generated from the Python
 * record model and column table): every record the TypeScript recorder makes from the real
 * fixtures, and every committed golden, is valid under it (ajv), and carries exactly the fields
 * it names. tests/record/test_record_json_schema.py validates the same goldens with jsonschema.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { FIXTURES, golden, scenarios } from "../../scripts/fixture-io.ts";
import { FAMILIES, INCOMPLETE_REASONS, LATE_ATTACH, NOT_SEEN, PAGE_KINDS, SOURCES, URL_DETAILS } from "../../src/record/types.ts";
import type { Family, NavigationRecord } from "../../src/record/types.ts";

interface ObjectSchema { properties: Record<string, unknown>; required: string[] }
const schema = JSON.parse(readFileSync(join(FIXTURES, "../../../schema/navigation-record.schema.json"), "utf8")) as
  ObjectSchema & { $defs: Record<string, ObjectSchema> };
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function first<T>(xs: readonly T[]): T {
  const x = xs[0];
  if (x === undefined) throw new Error("empty list");
  return x;
}

function def(name: string): ObjectSchema {
  const d = name === "" ? schema : schema.$defs[name];
  if (!d) throw new Error(`no $defs.${name} in the schema`);
  return d;
}

/** required <= keys <= properties, for one object of a record and the schema object it matches. */
function sameFields(value: unknown, def: ObjectSchema, where: string): void {
  const keys = Object.keys(value as object).sort();
  expect(def.required.filter((k) => !keys.includes(k)), `${where}: missing`).toEqual([]);
  expect(keys.filter((k) => !(k in def.properties)), `${where}: not in the schema`).toEqual([]);
}

describe.each(scenarios())("fixture %s", (name) => {
  const committed = JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), "utf8")) as unknown[];

  it("every record, fresh from the recorder and committed, is valid", () => {
    const records: unknown[] = [...golden(name), ...committed];
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      const ok = validate(r);
      expect(validate.errors ?? [], JSON.stringify(validate.errors?.slice(0, 3))).toEqual([]);
      expect(ok).toBe(true);
    }
  });

  it("every object carries exactly the schema's fields", () => {
    for (const r of golden(name)) {
      sameFields(r, schema, "record");
      sameFields(r.page, def("Page"), "page");
      sameFields(r.page.browser, def("Browser"), "page.browser");
      if (r.page.network) sameFields(r.page.network, def("NetworkInfo"), "page.network");
      sameFields(r.milestones, def("Milestones"), "milestones");
      r.requests.forEach((q, i) => sameFields(q, def("Request"), `requests[${i}]`));
      r.connections.forEach((c, i) => sameFields(c, def("Connection"), `connections[${i}]`));
      r.hosts.forEach((h, i) => sameFields(h, def("HostSummary"), `hosts[${i}]`));
    }
  });
});

describe("the TypeScript value sets are the schema's", () => {
  const enumOf = (name: string, prop: string): unknown => {
    const p = def(name).properties[prop] as { enum?: unknown[] };
    return (p.enum ?? []).filter((v) => v !== null);
  };
  it("sources, URL details, families, late attach", () => {
    expect(enumOf("", "source")).toEqual([...SOURCES]);
    expect(enumOf("Page", "url_detail")).toEqual([...URL_DETAILS]);
    expect(enumOf("Request", "family")).toEqual([...FAMILIES]);
    expect(enumOf("Connection", "family")).toEqual([...FAMILIES]);
    expect(enumOf("Page", "late_attach")).toEqual([...LATE_ATTACH]);
  });
  it("page kinds, incomplete reasons, what DevTools cannot see", () => {
    expect(enumOf("Page", "kind")).toEqual([...PAGE_KINDS]);
    const items = (prop: string): unknown => (def("Page").properties[prop] as { items?: { enum?: unknown[] } }).items?.enum;
    expect(items("incomplete_reasons")).toEqual([...INCOMPLETE_REASONS]);
    expect(items("not_seen")).toEqual([...NOT_SEEN]);
  });
});

describe("the schema refuses what the host refuses", () => {
  const good = first(golden(first(scenarios())));
  const cases: [string, (r: NavigationRecord) => void][] = [
    ["status 700", (r) => { first(r.requests).status = 700; }],
    ["port 0", (r) => { first(r.requests).remote_port = 0; }],
    ["share 1.5", (r) => { first(r.connections).share = 1.5; }],
    ["an unknown incomplete reason", (r) => { (r.page.incomplete_reasons as string[]) = ["tired"]; }],
    ["an unknown kind", (r) => { (r.page as { kind: string }).kind = "hard"; }],
    ["a negative phase", (r) => { first(r.requests).wait_ms = -1; }],
    ["family h4", (r) => { first(r.hosts).families = ["h4" as Family]; }],
    ["21 redirects", (r) => { r.page.redirects = Array<string>(21).fill("x"); }],
    ["schema 2", (r) => { (r as { schema: number }).schema = 2; }],
    ["missing milestones", (r) => { delete (r as Partial<NavigationRecord>).milestones; }],
  ];
  it.each(cases)("%s", (_name, breakIt) => {
    const r = structuredClone(good);
    expect(validate(r)).toBe(true);
    breakIt(r);
    expect(validate(r)).toBe(false);
  });
});
