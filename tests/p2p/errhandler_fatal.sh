#!/bin/sh
# errhandler_fatal.sh WEFTRUN PROGRAM MODE PATTERN...: runs PROGRAM MODE in 2 processes and
# passes when the job ends by itself (not by the timeout) with a failing status and every
# PATTERN (grep -E) in its output.
weftrun=$1 prog=$2 mode=$3
shift 3
out=$(timeout 30 "$weftrun" -n 2 "$prog" "$mode" 2>&1)
rc=$?
echo "$out"
echo "exit status $rc"
[ $rc -ne 0 ] || { echo "FAIL: the job exited 0"; exit 1; }
[ $rc -ne 124 ] || { echo "FAIL: the job did not end (timeout)"; exit 1; }
for p in "$@"; do
    echo "$out" | grep -Eq -- "$p" || { echo "FAIL: no line matches: $p"; exit 1; }
done
if echo "$out" | grep -q "NOT ABORTED"; then echo "FAIL: the error returned"; exit 1; fi
echo PASS
