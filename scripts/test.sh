#!/usr/bin/env bash
# The whole test suite: set-up, then TypeScript checks and unit tests, then every Python test
# (unit, end-to-end with Chromium and caddy, testbed with network namespaces; the last need root).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

# The static checks and the TypeScript unit tests share nothing: they run side by side (about 35 s
# on this 2-core machine instead of 65 one after another), each one's output printed whole once
# it ends, in this order; any failure fails the suite after all of them have run.
checks_dir=$(mktemp -d)
trap 'rm -rf "$checks_dir"' EXIT
checks=(
  "TypeScript: lint|npm run --silent lint"
  "TypeScript: type-check|npm run --silent typecheck"
  "TypeScript: unit tests, golden freshness|npm test --silent"
  "Python: ruff|.venv/bin/ruff check native-host tests scripts"
  "Python: mypy|.venv/bin/mypy native-host/protolens"
)
pids=()
for i in "${!checks[@]}"; do
  bash -c "${checks[$i]#*|}" >"$checks_dir/$i.out" 2>&1 &
  pids+=("$!")
done
checks_failed=0
for i in "${!checks[@]}"; do
  echo "== ${checks[$i]%%|*}"
  rc=0
  wait "${pids[$i]}" || rc=$?
  cat "$checks_dir/$i.out"
  if [ "$rc" -ne 0 ]; then
    echo "${checks[$i]%%|*} failed (exit $rc)" >&2
    checks_failed=1
  fi
done
if [ "$checks_failed" -ne 0 ]; then
  exit 1
fi

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
  pytest_stage --durations=30 "$@"  # pytest.ini testpaths: the whole tree unless a path is given
  exit $?
fi
# The whole suite in two stages. Tests that need neither Chromium nor namespaces (markers e2e and
# netns) share nothing between files, so pytest-xdist runs them, one file per worker at a time.
# Three workers on this 2-core machine, as many of these tests wait on subprocesses, sockets and
# pip: 250 s against 295 with two and 255 with four (a fresh clone, 2026-11-27, one run each;
# 6.5 minutes with none). The end-to-end and testbed tests then run one at a time, alone on the
# machine: their figures are timed against the wire.
echo "== Python: pytest, unit and component tests (3 workers)"
rc_light=0
pytest_stage tests -m "not e2e and not netns" -n 3 --dist loadfile --durations=15 || rc_light=$?
echo "== Python: pytest, end-to-end and testbed tests (one at a time)"
rc_heavy=0
pytest_stage tests -m "e2e or netns" --durations=80 || rc_heavy=$?
if [ "$rc_light" -ne 0 ] || [ "$rc_heavy" -ne 0 ]; then
  echo "pytest failed: unit/component stage exit $rc_light, end-to-end/testbed stage exit $rc_heavy" >&2
  exit 1
fi
