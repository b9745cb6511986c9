#!/usr/bin/env bash
# Builds what a user installs without the source tree (docs/PACKAGING.md), into package/ or $1:
#   protolens-extension-VERSION.zip   the extension for the Chrome Web Store (manifest without
#                                      the development key)
#   protolens-VERSION-py3-none-any.whl and protolens-VERSION.tar.gz
#                                      the host: `pipx install protolens-VERSION-py3-none-any.whl`
# Needs what scripts/setup.sh installs (node_modules, .venv with the `build` frontend).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-package}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$out"
version="$(node -p 'require("./manifest.json").version')"

echo "[package] extension $version: npm run build"
npm run --silent build >/dev/null
"$python" scripts/package_extension.py dist "$out/protolens-extension-$version.zip"

echo "[package] host: sdist and wheel (python -m build)"
# the wheel is built from the sdist, so a file missing from the sdist is missing from the wheel too
"$python" -m build --outdir "$out" native-host >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
ls -1 "$out"/protolens-*
