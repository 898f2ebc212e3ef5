#!/usr/bin/env bash
# Configures and builds qmatmul. `--sanitize` builds into build-asan/ with
# AddressSanitizer + UBSan; otherwise a Release build in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DQMATMUL_SANITIZE=ON -DQMATMUL_BUILD_BENCH=OFF)
fi
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# Configure when no build files exist yet (also after a configure that failed
# half way, which leaves a CMakeCache.txt but no build.ninja / Makefile).
if [ ! -f "$dir/build.ninja" ] && [ ! -f "$dir/Makefile" ]; then
  cmake -S . -B "$dir" "${generator[@]}" "${flags[@]}"
fi
cmake --build "$dir" --parallel "$(nproc)"
