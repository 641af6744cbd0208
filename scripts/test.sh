#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs ctest, then builds again with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite under them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"

echo "== build (RelWithDebInfo)"
bash "$root/scripts/build.sh" "$root/build" >/dev/null
echo "== ctest"
(cd "$root/build" && ctest --output-on-failure --timeout 300 -j2)

echo "== build (address,undefined sanitizers)"
bash "$root/scripts/build.sh" "$root/build-asan" -DWEFT_SANITIZE=address,undefined -DWEFT_STREAM_CHECKS=ON -DWEFT_BUILD_BENCH=OFF >/dev/null
echo "== ctest under ASan+UBSan"
(cd "$root/build-asan" && ctest --output-on-failure --timeout 300 -j2)
