#!/usr/bin/env bash
# rejects-delivered-length.sh KIT PLUGIN: PLUGIN is libweft-trunclen.so (trunclen_shim.cpp),
# the skeleton fabric reporting a truncated receive's delivered length instead of the sent
# length.  Honest (WEFT_TRUNCLEN_HONEST=1) it must pass the kit's in-process suite; lying it
# must fail Control.TruncationReportsErrTruncate and nothing else.
set -u -o pipefail
kit=$1 plugin=$2
WEFT_TRUNCLEN_HONEST=1 "$kit" --fabric "$plugin" --no-multiprocess || {
    echo "rejects-delivered-length: the honest wrapper fails the kit: the check below proves nothing"
    exit 1
}
out=$("$kit" --fabric "$plugin" --no-multiprocess 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "rejects-delivered-length: the kit exited $rc, not 1 (failures)"; exit 1; }
echo "$out" | grep -q '^FAIL  Control\.TruncationReportsErrTruncate' ||
    { echo "rejects-delivered-length: the kit did not fail Control.TruncationReportsErrTruncate"; exit 1; }
echo "$out" | grep -q '^weft-conformance: .*: [0-9]* passed, 1 failed,' ||
    { echo "rejects-delivered-length: the kit failed more than the truncation test"; exit 1; }
echo "rejects-delivered-length: OK (the kit rejects the delivered length)"
