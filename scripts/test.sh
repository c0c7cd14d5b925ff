#!/usr/bin/env bash
# Quick start, command 2 of 2: the whole test suite. Installs what it needs first (idempotent),
# then: formatting and lint, the C++ unit tests and fuzz-corpus replays (ctest, presets dev and
# asan of CMakePresets.json), the native stub check, the strict type check, the Python tests on
# the native backend, the parity files again with the scalar kernels forced, the whole suite on
# the pure-Python fallback, and the release artefacts (scripts/build_wheels.sh: sdist and repaired
# wheels, tested installed in fresh virtualenvs). Any failure fails the script. Each step prints
# its wall time, so the 35-minute CI budget can be checked step by step.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
step_start=$SECONDS
timing() { echo "    ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
# ccache when it is installed and no launcher is set: the Release core library compiles the same
# for .venv and for every wheel, so the wheel builds reuse its objects. Checked again after
# install.sh, which installs ccache on a bare machine.
use_ccache() {
  if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  fi
}
use_ccache
bash scripts/install.sh
use_ccache
JOBS="${JOBS:-$(nproc)}"
timing

echo "==> clang-format"
git ls-files '*.h' '*.cc' | xargs clang-format --dry-run --Werror
echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

timing

echo "==> C++ unit tests (ctest, preset dev)"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$JOBS"
ctest --preset dev -j "$JOBS"
timing

echo "==> C++ unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (preset asan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ctest --preset asan -j "$JOBS"
timing

# ---- ThreadSanitizer: the commit path under concurrent staging (issue 13) --------------------
# A separate, self-contained block: a TSan build of the library, of the threaded C++ tests
# (target luminamoon_concurrency_tests) and of the Python module, then a small threaded Python
# driver (tests/tsan_driver.py) with the TSan runtime preloaded. Only these two targets are
# built, so the step stays at a few minutes on 2 cores. Any race report fails the script.
echo "==> commit-path concurrency under ThreadSanitizer"
cmake --preset tsan >/dev/null
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
rm -rf "$tsan_pkg"
trap - EXIT
timing
# ---- end of the ThreadSanitizer block ----------------------------------------------------------

echo "==> native stubs match the committed reference"
bash scripts/check_stubs.sh

echo "==> mypy --strict"
.venv/bin/mypy
timing

echo "==> pytest (native backend)"
.venv/bin/python -c "import luminamoon.data as d, sys; sys.exit(d.BACKEND != 'native')" \
  || { echo "native backend failed to import"; exit 1; }
.venv/bin/python -m pytest -q -p no:cacheprovider tests
timing

# The kernels users without AVX get, checked from Python against the fallback: only the parity
# files (the rest of the suite adds nothing kernel-specific and would cost minutes).
echo "==> pytest parity files with the scalar kernels forced (LUMINAMOON_SIMD=scalar)"
LUMINAMOON_SIMD=scalar .venv/bin/python -c \
  "import luminamoon.data as d, sys; sys.exit(d.simd_isa() != 'scalar')"
LUMINAMOON_SIMD=scalar .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_*parity*.py
timing

echo "==> pytest (pure-Python fallback backend)"
LUMINAMOON_FORCE_FALLBACK=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests
timing

echo "==> sdist and wheels: build, auditwheel repair, tests of the installed wheels"
bash scripts/build_wheels.sh
timing
echo "==> all tests passed in $((SECONDS - START)) s"
