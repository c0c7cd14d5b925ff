#!/usr/bin/env bash
# Quick start, command 1 of 2: install everything, then run the main job on a corpus it makes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/luminamoon-data demo "$@"
