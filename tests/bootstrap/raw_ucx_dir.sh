#!/bin/bash
# raw_ucx_dir.sh WEFTRUN RAW_UCX_MSGRATE: the address-exchange directory of raw-ucx-msgrate
# (bench/) must be this user's and closed to others, and must not be left behind.  Another
# user's or an open directory chooses whom the benchmark connects to; the old default name also
# carried the job token, which any local user could read in /tmp and use on the job's KVS.
weftrun=$1 prog=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
open_dir=$(mktemp -d) || exit 1
trap 'rm -rf "$open_dir"' EXIT
chmod 0777 "$open_dir"
out=$(timeout 60 "$weftrun" -n 2 "$prog" -i 10 -w 1 -d "$open_dir" 2>&1) && fail "ran with an exchange directory open to others"
grep -q "refusing the exchange directory $open_dir" <<<"$out" || fail "no refusal message; output: $out"
before=$(ls -d /tmp/raw-ucx-msgrate.* 2>/dev/null | wc -l)
out=$(timeout 60 "$weftrun" -n 2 "$prog" -i 10 -w 1 2>&1) || fail "the default directory did not work: $out"
after=$(ls -d /tmp/raw-ucx-msgrate.* 2>/dev/null | wc -l)
[ "$after" -le "$before" ] || fail "the default exchange directory was left behind: $(ls -d /tmp/raw-ucx-msgrate.*)"
echo "PASS"
