#!/usr/bin/env bash
# Runs a Weft program on the galapagos fabric with hardware kernels hosted by the GAScore model.
#   with_gascore.sh GASCORE WEFTRUN LAYOUT PROG [ARGS...]
# LAYOUT picks the cluster file (written here, with a free port for the model's node):
#   peer     1 rank (kernel 0); hardware node: kernel 1 "idle", kernel 2 "echo"
#   jacobi2  2 ranks (kernels 0 and 2); hardware node: kernel 1 "jacobi"
#   jacobi1  1 rank (kernel 0); hardware node: kernels 1 and 2 "jacobi"
# The jacobi layouts pass N and ITERS (PROG's first two arguments) to the model's kernels.
# Fails unless the program exits 0, prints PASS, and the model reports no dropped packet (and,
# for "peer", the counters that program's messages must have left on kernel 1).
set -u
gascore=$1 weftrun=$2 layout=$3
shift 3
dir=$(mktemp -d "${TMPDIR:-/tmp}/weft-gascore.XXXXXX")
mpid=
cleanup() {
    [ -n "$mpid" ] && kill "$mpid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
export WEFT_GALAPAGOS_TOKEN="with-gascore-$$-$RANDOM"

case $layout in
peer) np=1; kernels='{"id": 0, "node": 0}, {"id": 1, "node": 1, "function": "idle"}, {"id": 2, "node": 1, "function": "echo"}'; sw2= ;;
jacobi2) np=2; kernels='{"id": 0, "node": 0}, {"id": 1, "node": 1, "function": "jacobi"}, {"id": 2, "node": 2}'
    sw2=', {"node": 2, "type": "sw", "address": "127.0.0.1"}' ;;
jacobi1) np=1; kernels='{"id": 0, "node": 0}, {"id": 1, "node": 1, "function": "jacobi"}, {"id": 2, "node": 1, "function": "jacobi"}'; sw2= ;;
*) echo "with_gascore.sh: unknown layout $layout" >&2; exit 2 ;;
esac
params=()
case $layout in jacobi*) params=(--param "n=$2" --param "iters=$3" --param kernels=3) ;; esac

listening=0
for try in 1 2 3 4 5; do
    # Below the ephemeral range (32768 up): no connection can hold it as its local port.
    port=$((15000 + (RANDOM * 7 + $$ + try * 131) % 17000))
    cat >"$dir/cluster.json" <<EOF_CLUSTER
{
  "nodes": [
    {"node": 0, "type": "sw", "address": "127.0.0.1"},
    {"node": 1, "type": "hw", "address": "127.0.0.1:$port"}$sw2
  ],
  "kernels": [$kernels]
}
EOF_CLUSTER
    "$gascore" --cluster "$dir/cluster.json" --node 1 "${params[@]}" >"$dir/model.out" 2>"$dir/model.err" &
    mpid=$!
    for _ in $(seq 100); do
        grep -q listening "$dir/model.out" 2>/dev/null && { listening=1; break; }
        kill -0 "$mpid" 2>/dev/null || break
        sleep 0.1
    done
    [ $listening = 1 ] && break
    kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null; mpid=
done
if [ $listening != 1 ]; then
    echo "FAIL: weft-gascore did not start:"; cat "$dir/model.err"; exit 1
fi
cat "$dir/model.out"

WEFT_FABRIC=galapagos WEFT_GALAPAGOS_CLUSTER="$dir/cluster.json" timeout 120 \
    "$weftrun" -n "$np" "$@" >"$dir/run.out" 2>&1
rc=$?
cat "$dir/run.out"
kill -TERM "$mpid"; wait "$mpid"; mrc=$?; mpid=
cat "$dir/model.err"
fail=0
[ $rc = 0 ] || { echo "FAIL: the program exited with $rc"; fail=1; }
grep -qx PASS "$dir/run.out" || { echo "FAIL: the program did not print PASS"; fail=1; }
[ $mrc = 0 ] || { echo "FAIL: weft-gascore exited with $mrc"; fail=1; }
grep -q "dropped 0 " "$dir/model.err" || { echo "FAIL: the model dropped packets"; fail=1; }
if [ "$layout" = peer ]; then
    # Short H_INCR and Long H_INCR: mem_ready 2; H_ADD 5 twice: counter 10.
    grep -q "kernel 1: mem_ready 2, barrier 0, counter 10" "$dir/model.err" ||
        { echo "FAIL: kernel 1's counters are not mem_ready 2, barrier 0, counter 10"; fail=1; }
fi
[ $fail = 0 ] && echo "with_gascore: PASS"
exit $fail
