#!/usr/bin/env bash
# Quick start, step 1: install dependencies, build, run `qmatmul demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/tools/qmatmul demo
