// Validates HAR files with har-validator (the HAR 1.2 JSON schema of the npm package har-schema,
// checked by ajv). Usage: node tests/har/validate-har.cjs FILE...; prints "ok FILE" or the errors
// and exits 1. Used by tests/har/test_har_export.py.
const fs = require("node:fs");
const validate = require("har-validator");

async function main(files) {
  let failed = false;
  for (const file of files) {
    const data = JSON.parse(fs.readFileSync(file, "utf8"));
    try {
      await validate.har(data);
      console.log(`ok ${file}`);
    } catch (err) {
      failed = true;
      console.log(`invalid ${file}: ${JSON.stringify(err.errors ?? String(err))}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

void main(process.argv.slice(2));
