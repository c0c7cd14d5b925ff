#!/usr/bin/env bash
# The StringTensor Python tests (lifetime of exports, imports and slices included) against a
# native module built with AddressSanitizer + UndefinedBehaviorSanitizer. Python itself is not
# instrumented: libasan is preloaded and leak checking is off (CPython keeps memory at exit).
# Usage: bash scripts/asan_python_tests.sh [pytest args]; builds with the asan-python preset of
# CMakePresets.json into build/asan-python (~10 min on 2 cores the first time;
# LUMINAMOON_ASAN_BUILD picks another dir) and runs from a throw-away overlay, never installing
# anything.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${LUMINAMOON_ASAN_BUILD:-build/asan-python}"
cmake --preset asan-python -B "$BUILD" >/dev/null
cmake --build "$BUILD" --target _native
OVERLAY=$(mktemp -d)
trap 'rm -rf "$OVERLAY"' EXIT
cp -r python/. "$OVERLAY/"
ln -sf "$PWD/$BUILD"/bindings/_native*.so "$OVERLAY/luminamoon/data/"
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$OVERLAY" \
  .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/test_string_tensor.py tests/test_string_tensor_parity.py tests/test_gpu_vs_cpu_strings.py "$@"
