#!/usr/bin/env bash
# Message rate with T threads per process in Weft's three threading modes (global critical
# section, per-VCI critical sections, streams) against the same loop written directly on UCP
# (raw-ucx-msgrate, one worker per thread): the MPIX Stream paper's Figure 3 on one node.
#
#   bench/compare-modes.sh [options] [BUILD_DIR]        (BUILD_DIR defaults to ./build)
#
# Uses BUILD_DIR/bin/{weftrun,weft-msgrate,raw-ucx-msgrate}.  Every configuration is repeated
# (-r, default 5) with all programs interleaved within a repetition; medians are reported.
# This is a benchmark, not a test: it prints numbers and judges nothing.
set -u -o pipefail

usage() {
    cat <<EOF
Usage: $0 [options] [BUILD_DIR]
Runs raw-ucx-msgrate and weft-msgrate -m single|global|vci|stream (WEFT_FABRIC=ucx) for each
thread count, 8-byte messages, window 64 + ack, and prints median msg/s and the ratio to raw UCX
with the same thread count.

  -r, --reps N       repetitions (default 5); the median is reported
  -T, --threads LIST thread counts per process, comma-separated (default 1,2)
  -i, --iters N      timed iterations (windows of 64) per thread (default 20000)
      --tls TLS      UCX_TLS (default: \$UCX_TLS, else "shm,self")
      --cores A,B    rank 0's threads all on core A, rank 1's on core B (default 0,1)
      --quick        10x fewer iterations (a smoke run)
      --csv FILE     write the table as CSV to FILE
      --samples FILE write every sample as CSV to FILE: mode,threads,rep,msg_per_s
      --spread       a CPU per thread: thread i of rank r on the (r*T+i)-th CPU of the mask this
                     script was started with (weft-msgrate/raw-ucx-msgrate -P; the Figure 3
                     setup on a machine with 2T cores) instead of --cores
      --mpi          also mpich-msgrate and ompi-msgrate (the same loop on MPICH and Open MPI,
                     one thread, pinned like the others) at T=1
      --timeout S    kill any single run after S seconds (default 120)
      --keep         keep the raw logs (their folder is printed)
      --instructions instead of rates: instructions per message under callgrind (valgrind must
                     be installed), T=1 only, for every mode: rank 0's send path (each timed
                     window's weft_isend x 64 + weft_waitall, raw: ucp_tag_send_nbx x 64 +
                     progress until done) and rank 1's receive path (weft_irecv x 64 +
                     weft_waitall); the ack is not counted.  Minimum over -r repetitions
                     (default 3 here), -i defaults to 1000.  See README.md for the settings.
  -h, --help         this text

Mode single (T=1 only) is weft-msgrate's default: weft_init (THREAD_SINGLE), WEFT_COMM_WORLD,
no lock at all: the reference for what the locks of the other modes cost.
EOF
}

reps=5
tlist=1,2
iters=20000
tls=${UCX_TLS:-shm,self}
cores=0,1
quick=0
csv_out=
samples_out=
spread=0
with_mpi=0
run_timeout=120
keep=0
instructions=0
reps_set=0
iters_set=0
build=
while [ $# -gt 0 ]; do
    case $1 in
    -r | --reps) reps=$2; reps_set=1; shift 2 ;;
    -T | --threads) tlist=$2; shift 2 ;;
    -i | --iters) iters=$2; iters_set=1; shift 2 ;;
    --tls) tls=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --csv) csv_out=$2; shift 2 ;;
    --samples) samples_out=$2; shift 2 ;;
    --spread) spread=1; shift ;;
    --mpi) with_mpi=1; shift ;;
    --timeout) run_timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --instructions) instructions=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    *)
        if [ -n "$build" ]; then echo "$0: more than one BUILD_DIR" >&2; exit 2; fi
        build=$1; shift ;;
    esac
done
build=${build:-./build}
if [ $instructions = 1 ]; then
    [ $reps_set = 1 ] || reps=3
    [ $iters_set = 1 ] || iters=1000
    tlist=1
fi

die() { echo "$0: $*" >&2; exit 1; }
is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }
for v in reps iters run_timeout; do
    is_uint "${!v}" && [ "${!v}" -gt 0 ] || die "--${v//_/-} needs a positive integer (got '${!v}')"
done
threads=()
IFS=, read -r -a threads <<<"$tlist"
[ ${#threads[@]} -gt 0 ] || die "-T needs at least one thread count"
for t in "${threads[@]}"; do is_uint "$t" && [ "$t" -gt 0 ] || die "bad thread count '$t' in -T $tlist"; done
[ $quick = 1 ] && iters=$((iters / 10 > 0 ? iters / 10 : 1))
core0=${cores%%,*}
core1=${cores#*,}
is_uint "$core0" && is_uint "$core1" && [ "$core0" != "$core1" ] ||
    die "--cores needs two different core numbers, e.g. 0,1 (got '$cores')"
command -v taskset >/dev/null || die "taskset not found (util-linux)"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
for c in "$core0" "$core1"; do taskset -c "$c" true 2>/dev/null || die "cannot pin to core $c"; done

weftrun=$build/bin/weftrun
msgrate=$build/bin/weft-msgrate
raw=$build/bin/raw-ucx-msgrate
for f in "$weftrun" "$msgrate" "$raw"; do
    [ -x "$f" ] || die "$f not found or not executable (build it, or pass the build dir)"
done
if [ $with_mpi = 1 ]; then
    [ -x "$build/bin/mpich-msgrate" ] && command -v mpiexec.mpich >/dev/null ||
        die "--mpi: $build/bin/mpich-msgrate or mpiexec.mpich missing (apt-get install mpich libmpich-dev, rebuild)"
    [ -x "$build/bin/ompi-msgrate" ] && command -v mpirun.openmpi >/dev/null ||
        die "--mpi: $build/bin/ompi-msgrate or mpirun.openmpi missing (apt-get install openmpi-bin libopenmpi-dev, rebuild)"
fi
# CPUs and pinning: --cores A,B (taskset A,B, -p: rank r on the r-th) or --spread (the inherited
# mask, -P: a CPU per thread).
cpuset=$core0,$core1
pin_flag=-p
if [ $spread = 1 ]; then
    cpuset=$(taskset -pc $$ | sed 's/.*: *//')
    pin_flag=-P
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/weft-compare-modes.XXXXXX") || die "mktemp failed"
cleanup() { if [ $keep = 1 ]; then echo "raw logs kept in $logs"; else rm -rf "$logs"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# --instructions: callgrind on one rank (CG_RANK), counting only each timed window
# (BENCH_CG=window, a client request in both programs).  The settings make the count the path
# length rather than the machine's load: a 256-entry shared-memory FIFO, so that no send of a
# window of 64 waits for FIFO space (UCX's default of 64 makes some sends pend, and how many
# depends on when the peer runs); no yield while polling (WEFT_POLLS_BEFORE_YIELD, as
# raw-ucx-msgrate, which never yields); and, in the counted rank, a 5 ms sleep before each window
# (outside the count, BENCH_CG_SETTLE_US) so that the peer has sent the whole window before the
# receiver starts polling for it.
if [ $instructions = 1 ]; then
    command -v valgrind >/dev/null || die "--instructions needs valgrind"
    cat >"$logs/cg-wrap.sh" <<'EOF_WRAP'
#!/bin/sh
if [ "$WEFT_RANK" = "$CG_RANK" ]; then
    exec valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$CG_OUT" "$@" 2>"$CG_OUT.log"
fi
exec "$@"
EOF_WRAP
    chmod +x "$logs/cg-wrap.sh"
    # cg_run MODE RANK OUT: prints instructions per message, or fails.
    cg_run() {
        local m=$1 r=$2 out=$3 rc=0 tot
        local -a prog=("$msgrate" -m "$m")
        [ "$m" = raw-ucx ] && prog=("$raw")
        rm -f "$out"
        BENCH_CG=window BENCH_CG_SETTLE_US=${BENCH_CG_SETTLE_US:-5000} CG_RANK=$r CG_OUT=$out \
            UCX_POSIX_FIFO_SIZE=${UCX_POSIX_FIFO_SIZE:-256} UCX_SYSV_FIFO_SIZE=${UCX_SYSV_FIFO_SIZE:-256} \
            WEFT_POLLS_BEFORE_YIELD=${WEFT_POLLS_BEFORE_YIELD:-1073741824} \
            RAW_UCX_DIR=$out.addr WEFT_FABRIC=ucx UCX_TLS=$tls timeout $((run_timeout * 10)) \
            taskset -c "$core0,$core1" "$weftrun" -n 2 "$logs/cg-wrap.sh" "${prog[@]}" -i "$iters" -w 10 -p \
            >"$out.stdout" 2>&1 || rc=$?
        tot=$(awk '/^(summary|totals):/ { print $2; exit }' "$out" 2>/dev/null)
        if [ $rc != 0 ] || [ -z "$tot" ]; then
            echo "  $m rank $r failed (rc $rc); log:" >&2
            tail -n 15 "$out.stdout" >&2
            return 1
        fi
        awk -v t="$tot" -v n="$iters" 'BEGIN { printf "%.1f\n", t / (n * 64) }'
    }
    echo "# instructions per message under callgrind: UCX_TLS=$tls, 8 B, window 64, $iters windows, minimum of $reps run(s) per cell"
    echo "# $(ucx_info -v 2>/dev/null | head -n1 | sed 's/^# *//') ; build dir $build ; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-8s %14s %14s %14s\n' mode "send (rank 0)" "recv (rank 1)" "vs raw-ucx"
    [ -n "$csv_out" ] && echo "mode,send_instr_per_msg,recv_instr_per_msg,reps" >"$csv_out"
    failed=0
    base_s= base_r=
    for m in raw-ucx single global vci stream; do
        cells=()
        for r in 0 1; do
            best=
            for rep in $(seq 1 "$reps"); do
                v=$(cg_run "$m" "$r" "$logs/cg.$m.r$r.$rep.out") || { failed=1; continue; }
                best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
            done
            cells+=("${best:-n/a}")
        done
        if [ "$m" = raw-ucx ]; then base_s=${cells[0]}; base_r=${cells[1]}; fi
        ratio=$(awk -v s="${cells[0]}" -v r="${cells[1]}" -v bs="$base_s" -v br="$base_r" \
            'BEGIN { if (bs + 0 == 0 || br + 0 == 0 || s == "n/a" || r == "n/a") print "n/a"; else printf "%.2fx\n", (s + r) / (bs + br) }')
        printf '%-8s %14s %14s %14s\n' "$m" "${cells[0]}" "${cells[1]}" "$ratio"
        [ -n "$csv_out" ] && echo "$m,${cells[0]},${cells[1]},$reps" >>"$csv_out"
    done
    echo "# vs raw-ucx: (send + recv) / raw-ucx's (send + recv)"
    exit $failed
fi

# run NAME T LOG PROG ARGS...: both ranks under taskset core0,core1; -p pins rank r (with all
# its threads) to the r-th of them.  Prints msg/s (CSV column 8) or fails.  raw-ucx-msgrate
# exchanges worker addresses through files in a fresh RAW_UCX_DIR per run.
run() {
    local name=$1 t=$2 log=$3; shift 3
    local csv=$log.csv rc=0 v
    rm -f "$csv"
    case $name in
    mpich) UCX_TLS=$tls timeout "$run_timeout" taskset -c "$cpuset" mpiexec.mpich -launcher fork -n 2 \
        "$@" -i "$iters" -w $((iters / 100 + 1)) -p >"$log" 2>&1 || rc=$? ;;
    ompi) timeout "$run_timeout" taskset -c "$cpuset" "${ompi_launch[@]}" \
        "$@" -i "$iters" -w $((iters / 100 + 1)) -p >"$log" 2>&1 || rc=$? ;;
    *) RAW_UCX_DIR=$log.addr WEFT_FABRIC=ucx UCX_TLS=$tls timeout "$run_timeout" \
        taskset -c "$cpuset" "$weftrun" -n 2 "$@" -t "$t" -i "$iters" \
        -w $((iters / 100 + 1)) "$pin_flag" -c "$csv" >"$log" 2>&1 || rc=$? ;;
    esac
    # mpi-msgrate prints "mpi <size> B window <W>: <rate> msg/s (...)"; the others write CSV.
    case $name in
    mpich | ompi) v=$(awk '$1 == "mpi" && $7 == "msg/s" { print $6 }' "$log") ;;
    *) v=$(awk -F, 'NR == 2 { print $8 }' "$csv" 2>/dev/null) ;;
    esac
    if [ $rc != 0 ] || [ -z "$v" ]; then
        echo "  $name T=$t failed (rc $rc); log:" >&2
        sed 's/^/    /' "$log" | tail -n 15 >&2
        return 1
    fi
    echo "$v"
}

median() {
    [ $# -gt 0 ] || return 0
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.0f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.3f\n", a / b }'; }
modes() {
    if [ "$1" != 1 ]; then echo "raw-ucx global vci stream"
    elif [ $with_mpi = 1 ]; then echo "raw-ucx single global vci stream mpich ompi"
    else echo "raw-ucx single global vci stream"; fi
}
# Open MPI: its own binding off (-p pins, as in the others); root needs --allow-run-as-root.
ompi_launch=(mpirun.openmpi -n 2 --bind-to none)
[ "$(id -u)" = 0 ] && ompi_launch+=(--allow-run-as-root)

echo "# weft-msgrate modes vs raw UCP: UCX_TLS=$tls, WEFT_FABRIC=ucx, 8 B, window 64 + ack, $iters windows/thread, $reps repetition(s), medians"
echo "# $(ucx_info -v 2>/dev/null | head -n1 | sed 's/^# *//') ; build dir $build"
if [ $spread = 1 ]; then
    ncpu=$(taskset -c "$cpuset" nproc)
    echo "# pinning: a CPU per thread, thread i of rank r on the (r*T+i)-th of CPUs $cpuset ($ncpu)"
    for t in "${threads[@]}"; do
        [ $((2 * t)) -gt "$ncpu" ] && echo "# T=$t: $((2 * t)) busy-polling threads on $ncpu CPUs: oversubscribed, T=$t rates measure time-slicing as much as the library"
    done
else
    echo "# pinning: all threads of rank 0 on core $core0, all threads of rank 1 on core $core1 ($(nproc) CPUs online)"
    for t in "${threads[@]}"; do
        [ "$t" -gt 1 ] && echo "# T=$t: $((2 * t)) busy-polling threads on these 2 cores (each ${t}x oversubscribed): T=$t rates measure time-slicing as much as the library"
    done
fi
[ $with_mpi = 1 ] && echo "# mpich, ompi: mpi-msgrate.c (the same loop, one thread) on $(mpichversion 2>/dev/null | awk '/Version:/ { print "MPICH", $NF }') and Open MPI $(ompi_info --version 2>/dev/null | awk '/Open MPI/ { print $NF; exit }'), T=1 only"
[ -n "$samples_out" ] && { echo "mode,threads,rep,msg_per_s" >"$samples_out" || die "cannot write $samples_out"; }
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other load skews every mode)"
declare -A samples
failed=0
for rep in $(seq 1 "$reps"); do
    line="## repetition $rep/$reps:"
    for t in "${threads[@]}"; do
        for m in $(modes "$t"); do
            log=$logs/$m.$t.$rep
            case $m in
            raw-ucx) v=$(run "$m" "$t" "$log" "$raw") ;;
            mpich | ompi) v=$(run "$m" "$t" "$log" "$build/bin/$m-msgrate") ;;
            *) v=$(run "$m" "$t" "$log" "$msgrate" -m "$m") ;;
            esac
            if [ -n "$v" ]; then
                samples[$m.$t]="${samples[$m.$t]-} $v"; line+=" $m/T$t=$v"
                [ -n "$samples_out" ] && echo "$m,$t,$rep,$v" >>"$samples_out"
            else failed=1; fi
        done
    done
    echo "$line"
done

echo
echo "# Summary (median of $reps; msg/s summed over all threads; ratio = mode / raw-ucx at the same T)"
printf '%-8s %7s %14s %11s\n' mode threads "msg/s" "vs raw-ucx"
[ -n "$csv_out" ] && echo "mode,threads,msg_per_s,ratio_to_raw_ucx,reps,ucx_tls" >"$csv_out"
for t in "${threads[@]}"; do
    # shellcheck disable=SC2086
    base=$(median ${samples[raw-ucx.$t]-})
    for m in $(modes "$t"); do
        # shellcheck disable=SC2086
        med=$(median ${samples[$m.$t]-})
        r=$(ratio "$med" "$base")
        printf '%-8s %7s %14s %11s\n' "$m" "$t" "${med:-n/a}" "$r"
        [ -n "$csv_out" ] && echo "$m,$t,${med},$r,$reps,\"$tls\"" >>"$csv_out"
    done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${threads[@]}"; do for m in $(modes "$t"); do echo "# samples $m T=$t:${samples[$m.$t]-}"; done; done
exit $failed
