#!/usr/bin/env bash
# Installs everything the project needs on Debian/Ubuntu, idempotently: the system packages (C++
# toolchain and libraries), a virtual environment in .venv with the Python tools, and the
# package itself (native module built by scikit-build-core). Re-running skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  g++ cmake ninja-build pkg-config git
  python3 python3-dev python3-venv
  zlib1g-dev libxxhash-dev libabsl-dev libzstd-dev libutf8proc-dev libsimdjson-dev
  libgtest-dev libbenchmark-dev clang-format ccache libcurl4-openssl-dev libcld2-dev
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "==> installing system packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
echo "==> installing Python build and test tools"
.venv/bin/python -m pip install -q -r requirements-dev.txt

echo "==> building and installing luminamoon-data (native module included)"
# No build isolation: the pinned build tools are in .venv and build/ keeps the CMake cache, so a
# rebuild after a change compiles only what changed.
.venv/bin/python -m pip install -q --no-build-isolation --no-deps .
.venv/bin/python -c "import luminamoon.data as d; print('==> luminamoon.data', d.__version__, 'backend:', d.BACKEND)"
