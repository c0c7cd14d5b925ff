#!/usr/bin/env bash
# The committed python/luminamoon/data/_native.pyi must equal the stub nanobind's stubgen makes
# from the installed native module. Regenerate with: bash scripts/check_stubs.sh --update
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
.venv/bin/python -m nanobind.stubgen -q -m luminamoon.data._native -o "$out/_native.pyi"
.venv/bin/ruff format -q "$out/_native.pyi"
if [ "${1:-}" = "--update" ]; then
  cp "$out/_native.pyi" python/luminamoon/data/_native.pyi
  echo "updated python/luminamoon/data/_native.pyi"
  exit 0
fi
diff -u python/luminamoon/data/_native.pyi "$out/_native.pyi"
echo "stubs up to date"
