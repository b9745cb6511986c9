// Validates HAR files with har-validator (the HAR 1.2 JSON schema of the npm package har-schema,
// checked by ajv). Usage: tsx scripts/validate-har.ts FILE...; prints "ok FILE" or "invalid FILE:
// errors" per file and exits 1 if any is invalid. Used by tests/share/test_har_export.py.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

interface HarValidator { har: (data: unknown) => Promise<boolean> }
interface ValidationFailure { errors?: unknown }

const validator = createRequire(import.meta.url)("har-validator") as HarValidator;

let failed = false;
for (const file of process.argv.slice(2)) {
  const data: unknown = JSON.parse(readFileSync(file, "utf8"));
  try {
    await validator.har(data);
    console.log(`ok ${file}`);
  } catch (err) {
    failed = true;
    console.log(`invalid ${file}: ${JSON.stringify((err as ValidationFailure).errors ?? String(err))}`);
  }
}
process.exit(failed ? 1 : 0);
