#!/usr/bin/env bash
# The whole test suite: set-up, then TypeScript checks and unit tests, then every Python test
# (unit, end-to-end with Chromium and caddy, testbed with network namespaces; the last need root).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "== TypeScript: lint, type-check, unit tests, golden freshness"
npm run --silent lint
npm run --silent typecheck
npm test --silent

echo "== Python: ruff, mypy"
.venv/bin/ruff check native-host tests scripts
.venv/bin/mypy native-host/protolens

echo "== Python: pytest"
set +e
.venv/bin/python -m pytest tests --durations=30 "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
