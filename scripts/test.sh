#!/usr/bin/env bash
# Quick start, step 2: build (if needed) and run the whole test suite with
# CTest: unit, differential and bad-input tests, the ONNX node tests, and the
# differential suite again with each instruction-set path forced.
# `--sanitize` does the same in the AddressSanitizer + UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
dir=build
if [ "${1:-}" = "--sanitize" ]; then dir=build-asan; fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" --timeout 900
