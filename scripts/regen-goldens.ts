/**
 * Writes tests/fixtures/cdp/<scenario>.expected.json = fromLog(<scenario>.jsonl) for every fixture.
 * With --check, writes nothing and fails if any golden is missing or stale (run by `npm test`).
 *
 *   npx tsx scripts/regen-goldens.ts [--check]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, goldenText, scenarios } from "./fixture-io.ts";

const check = process.argv.includes("--check");
const stale: string[] = [];
for (const name of scenarios()) {
  const path = join(FIXTURES, `${name}.expected.json`);
  const text = goldenText(name);
  if (check) {
    if (!existsSync(path) || readFileSync(path, "utf8") !== text) stale.push(name);
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
if (stale.length > 0) {
  console.error(`stale goldens: ${stale.join(", ")}; run: npm run regen-goldens`);
  process.exit(1);
}
if (check) console.log(`goldens fresh: ${scenarios().length} scenarios`);
