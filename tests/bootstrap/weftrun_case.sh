#!/bin/bash
# weftrun_case.sh CASE WEFTRUN RANK_HELPER BOOTSTRAP_CHECK: one job-control test of weftrun.
# Fails (exit 1) with what was expected and what happened.
case_name=$1 weftrun=$2 helper=$3 check=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() {
    echo "FAIL ($case_name): $*" >&2
    echo "--- weftrun output ---" >&2
    cat "$out" >&2
    exit 1
}

# run_job SECONDS_MAX ARGS...: runs weftrun (guarded by timeout), sets rc and elapsed.
run_job() {
    local max=$1
    shift
    local start=$SECONDS
    timeout 60 "$weftrun" "$@" >"$out" 2>&1
    rc=$?
    elapsed=$((SECONDS - start))
    [ "$rc" -ne 124 ] || [ "$case_name" = timeout ] || fail "weftrun did not finish within 60 s"
    [ "$elapsed" -le "$max" ] || fail "took ${elapsed} s, expected at most ${max} s"
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
expect_msg() { grep -Eq -- "$1" "$out" || fail "no line matching /$1/"; }

case $case_name in
signal)
    run_job 10 -n 2 "$helper" 0/sleep 1/segv
    expect_rc 139
    expect_msg '^weftrun: rank 1 \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\)$'
    ;;
keep-going)
    # Survivors run on to their own end; the status is still the first failure's.
    run_job 10 --keep-going -n 3 "$helper" 0/nap 1/segv 2/nap
    expect_rc 139
    expect_msg '^weftrun: rank 1 \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\); the others run on \(--keep-going\)$'
    [ "$(grep -c '^weftrun: rank' "$out")" -eq 1 ] || fail "survivors were ended or reported as failures"
    [ "$elapsed" -ge 1 ] || fail "the survivors did not get to finish their 1 s nap"
    ;;
exit3)
    # Rank 2 ignores SIGTERM: weftrun must escalate to SIGKILL after its 2 s grace.
    run_job 10 -n 3 "$helper" 0/exit3 1/sleep 2/stubborn
    expect_rc 3
    expect_msg '^weftrun: rank 0 \(pid [0-9]+\) exited with status 3$'
    [ "$(grep -c '^weftrun: rank' "$out")" -eq 1 ] || fail "ranks ended by weftrun were reported as failures"
    ;;
noexec)
    run_job 10 -n 2 /nonexistent/weft-no-such-program
    [ "$rc" -ne 0 ] || fail "exit status 0 for a program that does not exist"
    expect_msg "^weftrun: cannot execute '/nonexistent/weft-no-such-program': No such file or directory$"
    ;;
usage)
    run_job 5 "$helper" all/ok
    expect_rc 2
    expect_msg 'give -n N'
    expect_msg '^usage: weftrun'
    run_job 5 -n zero "$helper" all/ok
    expect_rc 2
    expect_msg "-n 'zero' is not a number"
    run_job 5 -n 2
    expect_rc 2
    expect_msg 'no program to run'
    ;;
ok)
    export WEFT_TEST_COPIED="copied value"
    run_job 20 -n 4 -x WEFT_TEST_SET="a b=c" -x WEFT_TEST_COPIED --fabric tcpx \
        "$helper" all/env "all/has:WEFT_TEST_SET=a b=c" "all/has:WEFT_TEST_COPIED=copied value" \
        all/has:WEFT_FABRIC=tcpx all/ok
    expect_rc 0
    ;;
early-exit)
    # A rank that exits 0 while another still runs is not a failure.
    run_job 10 -n 2 "$helper" 0/ok 1/nap
    expect_rc 0
    ;;
abort)
    run_job 10 -n 3 "$check" weftrun 3 --abort-rank 1
    expect_rc 5
    expect_msg '^weftrun: rank 1 \(pid [0-9]+\) called weft_abort with code 5: weft-bootstrap-check aborts on purpose$'
    ;;
sigterm)
    start=$SECONDS
    "$weftrun" -n 2 "$helper" all/sleep >"$out" 2>&1 &
    pid=$!
    sleep 1
    kill -TERM $pid
    wait $pid
    rc=$?
    [ $((SECONDS - start)) -le 10 ] || fail "weftrun took more than 10 s to end after SIGTERM"
    expect_rc 143
    expect_msg 'was killed by signal 15 \(Terminated\)'
    ;;
blame)
    # Rank 2 is killed, then ranks 0 and 1 exit with status 3 (as ranks that saw it die do),
    # all while weftrun is stopped, so that it reaps the three together: the kill is the cause.
    "$weftrun" -n 3 "$helper" 0/usr1exit3 1/usr1exit3 2/sleep >"$out" 2>&1 &
    pid=$!
    sleep 1
    declare -A pid_of
    for p in $(pgrep -P $pid); do
        r=$(tr '\0' '\n' <"/proc/$p/environ" | sed -n 's/^WEFT_RANK=//p')
        pid_of[$r]=$p
    done
    [ -n "${pid_of[0]:-}" ] && [ -n "${pid_of[1]:-}" ] && [ -n "${pid_of[2]:-}" ] || fail "ranks not found under weftrun $pid"
    kill -STOP $pid
    kill -KILL "${pid_of[2]}"
    sleep 0.2
    kill -USR1 "${pid_of[0]}" "${pid_of[1]}"
    sleep 0.5
    kill -CONT $pid
    wait $pid
    rc=$?
    expect_msg 'rank 2 \(pid [0-9]+\) was killed by signal 9'
    expect_rc 137
    ;;
orphans)
    # kill -9 of weftrun: its ranks (which ignore SIGTERM) must be gone within 2 s.
    "$weftrun" -n 2 "$helper" all/stubborn >"$out" 2>&1 &
    pid=$!
    sleep 1
    ranks=$(pgrep -P $pid | tr '\n' ' ')
    [ -n "$ranks" ] || fail "no rank processes found under weftrun $pid"
    kill -KILL $pid
    wait $pid 2>/dev/null
    sleep 2
    for r in $ranks; do
        if kill -0 "$r" 2>/dev/null; then
            kill -KILL "$r"
            fail "rank process $r still runs 2 s after weftrun was killed"
        fi
    done
    ;;
timeout)
    run_job 10 --timeout 1 -n 2 "$helper" all/sleep
    expect_rc 124
    expect_msg 'ran longer than --timeout 1 seconds'
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS ($case_name)"
