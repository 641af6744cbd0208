#!/usr/bin/env bash
# compare-mpi.sh [-r REPS] [-i ITERS] [BUILD]: the MPI front end against Weft's native API on
# one message-rate loop (weft-mpi-msgrate vs weft-mpi-msgrate-native: the same source).
#   1. instructions per message under callgrind, send path (rank 0) and receive path (rank 1):
#      each timed window's 64 MPI_Isend/weft_isend (MPI_Irecv/weft_irecv) + waitall, with the
#      settings of README.md "Instruction counts per message" (exact on rank 0);
#   2. message rate, REPS runs of each alternately (default 11), median and the ratio.
# UCX_TLS=shm,self, cores 0,1 (taskset).  Prints numbers, judges nothing.
set -eu
reps=11 iters=20000
while getopts r:i: o; do
  case $o in r) reps=$OPTARG ;; i) iters=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
build=$(cd "${1:-build}" && pwd)
run=(env UCX_TLS=shm,self WEFT_FABRIC=ucx taskset -c 0,1 "$build/bin/weftrun" -n 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '#!/bin/sh' 'if [ "$WEFT_RANK" = "$CG_RANK" ]; then exec valgrind --tool=callgrind \
  --collect-atstart=no --callgrind-out-file="$CG_OUT" "$@"; fi' 'exec "$@"' >"$tmp/wrap.sh"
chmod +x "$tmp/wrap.sh"
echo "instructions per message (callgrind, 1000 windows of 64 x 8 B):"
for api in native mpi; do
  exe=$build/bin/weft-mpi-msgrate
  [ $api = native ] && exe=$build/bin/weft-mpi-msgrate-native
  for r in 0 1; do
    BENCH_CG=window BENCH_CG_SETTLE_US=5000 WEFT_POLLS_BEFORE_YIELD=1073741824 UCX_POSIX_FIFO_SIZE=256 \
      UCX_SYSV_FIFO_SIZE=256 CG_RANK=$r CG_OUT=$tmp/$api.$r "${run[@]}" "$tmp/wrap.sh" "$exe" -i 1000 -w 10 >/dev/null 2>&1
    total=$(callgrind_annotate "$tmp/$api.$r" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
    printf '  %-6s %s: %8.1f\n' $api "$([ $r = 0 ] && echo send || echo recv)" "$(echo "$total / 64000" | bc -l)"
  done
done
echo "message rate (8 B, window 64, $iters windows), $reps runs each, alternating:"
for ((k = 0; k < reps; k++)); do
  for api in native mpi; do
    exe=$build/bin/weft-mpi-msgrate
    [ $api = native ] && exe=$build/bin/weft-mpi-msgrate-native
    "${run[@]}" "$exe" -i "$iters" | awk -v a=$api '{ print a, $6 }' >>"$tmp/rates"
  done
done
med() { grep "^$1 " "$tmp/rates" | awk '{ print $2 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
n=$(med native) m=$(med mpi)
echo "  native median $n msg/s"
echo "  mpi    median $m msg/s"
echo "  mpi / native: $(echo "scale=3; $m / $n" | bc)"
