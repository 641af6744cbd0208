#!/bin/bash
# liveness_case.sh CASE WEFTRUN PROG: one run of liveness_silent (PROG) under weftrun, checked
# from the outside too (weftrun's report and exit status).  CASE:
#   stopped  rank 1 stops itself: weftrun reports it not responding and ends it (status 137);
#   cutoff   rank 1 alone in a network namespace takes its link down: reported unreachable.
#            Needs root and iproute2 (skips, exit 77, otherwise); only touches the two
#            namespaces it makes;
#   compute  rank 1 computes for 2 x WEFT_PEER_TIMEOUT: nothing is reported, status 0.
# Exit 1 with what was expected and what happened.
case_name=$1 weftrun=$2 prog=$3
# Sanitizer runs stretch the times (scripts/test.sh sets WEFT_TEST_TIME_SCALE).
scale=${WEFT_TEST_TIME_SCALE:-1}
export WEFT_PEER_TIMEOUT=$((2 * scale))
out=$(mktemp)
nsa= nsb=
cleanup() {
    rm -f "$out"
    [ -z "$nsa" ] || ip netns del "$nsa" 2>/dev/null
    [ -z "$nsb" ] || ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT

fail() {
    echo "FAIL ($case_name): $*"
    echo "--- output ---"
    cat "$out"
    exit 1
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
expect_msg() { grep -Eq -- "$1" "$out" || fail "no line matching /$1/"; }
expect_no_msg() { ! grep -Eq -- "$1" "$out" || fail "a line matches /$1/"; }
# PASS from that many ranks, and no survivor ended badly (e.g. 66 for a sanitizer's report).
expect_passes() {
    [ "$(grep -c ': PASS$' "$out")" -eq "$1" ] || fail "expected $1 ranks to print PASS"
    expect_no_msg '^weftrun: rank [02] '
}

# --timeout: a rank that is never detected ends the job (status 124), not ctest's timeout.
job=(--keep-going --timeout $((40 * scale)) -n 3)
case $case_name in
stopped)
    "$weftrun" "${job[@]}" "$prog" stopped >"$out" 2>&1
    rc=$?
    expect_passes 2
    expect_msg '^weftrun: rank 1 \(pid [0-9]+\) failed according to rank [02]: not responding'
    expect_no_msg 'without weft_finalize'
    expect_rc 137
    ;;
compute)
    "$weftrun" "${job[@]}" "$prog" compute >"$out" 2>&1
    rc=$?
    expect_passes 3
    expect_no_msg 'failed|not responding|unreachable'
    expect_rc 0
    ;;
cutoff)
    if [ "$(id -u)" != 0 ]; then echo "SKIP: creating network namespaces needs root"; exit 77; fi
    command -v ip >/dev/null || { echo "SKIP: ip (iproute2) is not installed"; exit 77; }
    # Rank 1 alone in namespace B, the others and weftrun in A, joined by a veth pair.
    nsa=weftliveA$$ nsb=weftliveB$$
    if ! ip netns add "$nsa" 2>/dev/null || ! ip netns add "$nsb" 2>/dev/null; then
        echo "SKIP: cannot create a network namespace here (ip netns add failed: no CAP_SYS_ADMIN?)"
        exit 77
    fi
    if ! ip -n "$nsa" link add lv0 type veth peer name lv1 netns "$nsb" 2>/dev/null; then
        echo "SKIP: cannot create a veth pair here (no veth support or no CAP_NET_ADMIN)"
        exit 77
    fi
    ip -n "$nsa" addr add 10.232.0.1/24 dev lv0 && ip -n "$nsa" link set lv0 up && ip -n "$nsa" link set lo up &&
        ip -n "$nsb" addr add 10.232.0.2/24 dev lv1 && ip -n "$nsb" link set lv1 up &&
        ip -n "$nsb" link set lo up || fail "setting up the veth pair"
    # The victim cuts its own link (from inside B) once it has told the others the time.
    export NS_B=$nsb WEFT_TEST_CUT="ip link set dev lv1 down"
    ip netns exec "$nsa" "$weftrun" --kvs-host 10.232.0.1 "${job[@]}" sh -c '
        if [ "$WEFT_RANK" = 1 ]; then
            WEFT_GALAPAGOS_ADDR=10.232.0.2 exec ip netns exec "$NS_B" "$@"
        fi
        WEFT_GALAPAGOS_ADDR=10.232.0.1 exec "$@"' sh "$prog" cutoff >"$out" 2>&1
    rc=$?
    expect_passes 2
    expect_msg '^weftrun: rank 1 \(pid [0-9]+\) failed according to rank [02]: unreachable'
    expect_no_msg 'without weft_finalize'
    expect_rc 137
    ;;
*)
    fail "unknown case"
    ;;
esac
cat "$out"
echo "PASS ($case_name)"
