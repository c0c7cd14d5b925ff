#!/usr/bin/env bash
# Quick start, command 2 of 2: the whole test suite. Installs what it needs first (idempotent),
# then: formatting and lint, the C++ unit tests and fuzz-corpus replays (ctest), the Python tests
# on the native backend and again on the pure-Python fallback, the native stub check, and the
# strict type check. Any failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
JOBS="${JOBS:-$(nproc)}"

echo "==> clang-format"
git ls-files '*.h' '*.cc' | xargs clang-format --dry-run --Werror
echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "==> C++ unit tests (ctest)"
cmake -S . -B build/ctest -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLUMINAMOON_BUILD_TESTS=ON \
  >/dev/null
cmake --build build/ctest -j "$JOBS"
ctest --test-dir build/ctest --output-on-failure -j "$JOBS"

echo "==> C++ unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build/ctest-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLUMINAMOON_BUILD_TESTS=ON \
  -DLUMINAMOON_SANITIZE=ON >/dev/null
cmake --build build/ctest-asan -j "$JOBS"
ctest --test-dir build/ctest-asan --output-on-failure -j "$JOBS"

# ---- ThreadSanitizer: the commit path under concurrent staging (issue 13) --------------------
# A separate, self-contained block: a TSan build of the library, of the threaded C++ tests
# (target luminamoon_concurrency_tests) and of the Python module, then a small threaded Python
# driver (tests/tsan_driver.py) with the TSan runtime preloaded. Only these two targets are
# built, so the step stays at a few minutes on 2 cores. Any race report fails the script.
echo "==> commit-path concurrency under ThreadSanitizer"
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLUMINAMOON_BUILD_TESTS=ON \
  -DLUMINAMOON_BUILD_PYTHON=ON -DLUMINAMOON_SANITIZE_THREAD=ON \
  -DPython_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
cmake --build build/tsan -j "$JOBS" --target luminamoon_concurrency_tests _native
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  build/tsan/tests/cpp/luminamoon_concurrency_tests --gtest_brief=1
tsan_pkg="$(mktemp -d)"
trap 'rm -rf "$tsan_pkg"' EXIT
cp -r python/luminamoon "$tsan_pkg/"
cp build/tsan/bindings/_native*.so "$tsan_pkg/luminamoon/data/"
# CPython itself is not instrumented; the preloaded runtime still sees its GIL (pthread calls),
# so only races inside the module are reported.
TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
  LD_PRELOAD="$(c++ -print-file-name=libtsan.so)" PYTHONPATH="$tsan_pkg" \
  .venv/bin/python tests/tsan_driver.py "$tsan_pkg"
# ---- end of the ThreadSanitizer block ----------------------------------------------------------

echo "==> native stubs match the committed reference"
bash scripts/check_stubs.sh

echo "==> mypy --strict"
.venv/bin/mypy

echo "==> pytest (native backend)"
.venv/bin/python -c "import luminamoon.data as d, sys; sys.exit(d.BACKEND != 'native')" \
  || { echo "native backend failed to import"; exit 1; }
.venv/bin/python -m pytest -q -p no:cacheprovider tests

echo "==> pytest (pure-Python fallback backend)"
LUMINAMOON_FORCE_FALLBACK=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests
echo "==> stable-ABI (abi3) wheel on CPython >= 3.12"
bash scripts/check_abi3.sh
echo "==> all tests passed"
