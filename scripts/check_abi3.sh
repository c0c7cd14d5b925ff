#!/usr/bin/env bash
# The stable-ABI (abi3) wheel alone: built with a CPython >= 3.12 found here, repaired with
# auditwheel, installed into a fresh virtualenv (requirements-test.txt only) and tested there with
# the whole suite. Kept for callers of its old name; CI runs scripts/build_wheels.sh, which does
# this and the cp310/cp311 wheels and the sdist. Skips (exit 0) without a CPython >= 3.12.
set -euo pipefail
exec bash "$(dirname "$0")/build_wheels.sh" abi3
