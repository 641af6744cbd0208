#!/usr/bin/env bash
# check-test-regex.sh: no ctest PASS/FAIL_REGULAR_EXPRESSION repeats a group that holds `.*`,
# such as "(.*\n)*".  CMake's regex engine backtracks, and `.` matches a newline there, so
# such a group tries every way of cutting the output into pieces: on an output it does not
# match (a failing test's, some 50 lines) ctest spins for hours after the test ended, as
# failure.liveness_emfile did under ASan in CI.  Write ".*" alone: it spans lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake')
if bad=$(grep -nE '\([^()]*\.[*+][^()]*\)[*+{]' "${files[@]}"); then
  echo "check-test-regex: a repeated group holding .* backtracks without end on a mismatch (write .* alone):"
  echo "$bad"
  exit 1
fi
echo "check-test-regex: ${#files[@]} CMake files, no repeated group holding .*"
