#!/usr/bin/env bash
# Quick start: install dependencies, build, and run two processes exchanging messages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh" "$root/build" >/dev/null
echo
echo "\$ build/bin/weftrun -n 2 build/bin/weft-hello"
"$root/build/bin/weftrun" -n 2 "$root/build/bin/weft-hello"
