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

pytest_stage() {  # runs pytest with its arguments; exit code 5 (no tests collected) fails
  set +e
  .venv/bin/python -m pytest "$@"
  local rc=$?
  set -e
  if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    return 1
  fi
  return "$rc"
}

if [ "$#" -gt 0 ]; then  # a selection given: one pytest run, as asked
  echo "== Python: pytest $*"
  pytest_stage tests --durations=30 "$@"
  exit $?
fi
# The whole suite in two stages. Tests that need neither Chromium nor namespaces (markers e2e and
# netns) share nothing between files, so two workers run them (pytest-xdist, one file per worker
# at a time: about 3.5 minutes instead of 6.5 here). The end-to-end and testbed tests then run one
# at a time, alone on the machine: their figures are timed against the wire.
echo "== Python: pytest, unit and component tests (2 workers)"
rc_light=0
pytest_stage tests -m "not e2e and not netns" -n 2 --dist loadfile --durations=15 || rc_light=$?
echo "== Python: pytest, end-to-end and testbed tests (one at a time)"
rc_heavy=0
pytest_stage tests -m "e2e or netns" --durations=30 || rc_heavy=$?
if [ "$rc_light" -ne 0 ] || [ "$rc_heavy" -ne 0 ]; then
  echo "pytest failed: unit/component stage exit $rc_light, end-to-end/testbed stage exit $rc_heavy" >&2
  exit 1
fi
