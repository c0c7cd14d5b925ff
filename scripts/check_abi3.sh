#!/usr/bin/env bash
# Builds the stable-ABI (abi3) wheel with a CPython >= 3.12 found on this machine, installs it in
# a separate venv and runs the Python tests against it. Skips (exit 0) when no such interpreter
# exists: the main suite already covers the interpreter in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
candidates=(python3.13 python3.12)
if command -v pyenv >/dev/null 2>&1; then
  for v in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do [ -x "$v" ] && candidates+=("$v"); done
fi
PY=""
for c in "${candidates[@]}"; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    PY="$c"
    break
  fi
done
if [ -z "$PY" ]; then
  echo "no CPython >= 3.12 here; abi3 wheel check skipped"
  exit 0
fi
echo "abi3 check with $("$PY" --version)"
venv=build/abi3-venv
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r requirements-dev.txt
rm -rf build/abi3-wheel
"$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps . -w build/abi3-wheel \
  -C build-dir=build/abi3-build
wheel=$(ls build/abi3-wheel/*.whl)
case "$wheel" in
  *-abi3-*) ;;
  *) echo "expected an abi3 wheel, got $wheel"; exit 1 ;;
esac
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel"
"$venv/bin/python" -c "import luminamoon.data as d, sys; sys.exit(d.BACKEND != 'native')"
# The main runs already did the crash harness at full strength; here it proves the abi3 module.
LUMINAMOON_CRASH_KILLS=5 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
