#!/usr/bin/env bash
# coll-instructions.sh [-n PROCS] [-s SIZE] [-c LIST] [BUILD]: instructions per call of small
# blocking collectives under callgrind, rank 0, as the marginal count
# (I(20000 calls) - I(10000 calls)) / 10000 of weft-coll -m SIZE -M SIZE, which leaves out
# init and finalize.  -n 1 (the default) measures the path length alone: with one process no
# call waits for a peer.  With more, rank 0's count includes its polling while it waits, which
# depends on the load, so treat it as an upper bound.  Prints numbers, judges nothing.
set -eu
procs=1 size=8 list=barrier,bcast,allreduce,allgather,alltoall
while getopts n:s:c: o; do
  case $o in n) procs=$OPTARG ;; s) size=$OPTARG ;; c) list=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
build=$(cd "${1:-build}" && pwd)
command -v valgrind >/dev/null || { echo "$0: needs valgrind (Debian valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '#!/bin/sh' 'if [ "$WEFT_RANK" = 0 ]; then exec valgrind --tool=callgrind \
  --callgrind-out-file="$CG_OUT" "$@"; fi' 'exec "$@"' >"$tmp/wrap.sh"
chmod +x "$tmp/wrap.sh"
echo "instructions per call (callgrind, rank 0 of $procs, $size-byte calls, marginal of 10000 calls):"
declare -A total
for c in ${list//,/ }; do
  for it in 10000 20000; do
    CG_OUT=$tmp/$c.$it UCX_TLS=shm,self WEFT_FABRIC=ucx "$build/bin/weftrun" -n "$procs" "$tmp/wrap.sh" \
      "$build/bin/weft-coll" -c "$c" -m "$size" -M "$size" -i $it -w 10 >"$tmp/$c.$it.log" 2>&1 ||
      { echo "$0: weft-coll -c $c failed:" >&2; tail -n 5 "$tmp/$c.$it.log" >&2; exit 1; }
    total[$it]=$(callgrind_annotate "$tmp/$c.$it" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
  done
  printf '  %-10s %8d\n' "$c" $(((total[20000] - total[10000]) / 10000))
done
