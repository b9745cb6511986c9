#!/usr/bin/env bash
# Installs everything ProtoLens needs on a fresh Debian 12 machine (run as root): Debian packages,
# the locked npm and Python dependencies, then builds the extension (dist/) and the shaper helper.
# Idempotent: a second run only checks. Everything comes from the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(chromium caddy libnetfilter-queue-dev libmnl-dev build-essential pkg-config
  iperf3 tcpdump ethtool iptables iproute2 sqlite3 curl procps python3-venv iputils-ping
  openjdk-17-jre-headless)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python_env() {
  if [ ! -x .venv/bin/python ] || ! cmp -s native-host/requirements.lock .venv/.lock-installed; then
    echo "[setup] python: creating .venv from native-host/requirements.lock"
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -r native-host/requirements.lock
    cp native-host/requirements.lock .venv/.lock-installed
  fi
  .venv/bin/pip install -q --no-deps -e native-host
}

node_build() {
  if [ -f package-lock.json ]; then
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      echo "[setup] npm ci"
      npm ci --no-audit --no-fund --loglevel=error
    fi
    echo "[setup] building the extension into dist/"
    npm run --silent build
  fi
}

# The Python environment and the extension's build share nothing: side by side (pip mostly waits
# on the registry, webpack on the CPU).
# (Each in a background job: inside a "|| rc=$?" list, set -e would not stop at a failed step.)
( set -e; python_env ) &
python_pid=$!
( set -e; node_build ) &
node_pid=$!
python_rc=0
wait "$python_pid" || python_rc=$?
node_rc=0
wait "$node_pid" || node_rc=$?
if [ "$python_rc" -ne 0 ] || [ "$node_rc" -ne 0 ]; then
  echo "[setup] failed: python environment exit $python_rc, extension build exit $node_rc" >&2
  exit 1
fi

if [ -f native-host/shaper/Makefile ]; then
  echo "[setup] building the shaper helper (the explicit step; an installed package uses protolens testbed build)"
  make -s -C native-host/shaper
fi
echo "[setup] done"
