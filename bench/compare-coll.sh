#!/usr/bin/env bash
# Compare Weft's collectives with MPICH's and Open MPI's on this node: weft-coll under weftrun,
# mpich-coll under mpiexec.mpich, ompi-coll under mpirun.openmpi, the same N processes, the same
# sizes and the same measurement loop (bench/coll_bench.h), one table per collective.
#
#   bench/compare-coll.sh [options] [BUILD_DIR]        (BUILD_DIR defaults to ./build)
#
# Uses BUILD_DIR/bin/{weftrun,weft-coll,mpich-coll,ompi-coll} (the same layout holds for an
# install prefix).  Each program runs -r times, interleaved (weft, mpich, ompi, weft, ...), and
# the median per size is reported.
#
# This is a benchmark, not a test: it prints numbers and judges nothing.
set -u -o pipefail

usage() {
    cat <<EOF
Usage: $0 [options] [BUILD_DIR]
Runs weft-coll (weftrun), mpich-coll (mpiexec.mpich) and ompi-coll (mpirun.openmpi) with N
processes and prints, per collective, the median latency per size and Weft / best-MPI ratios.

  -n, --np N            processes (default 4)
  -r, --reps N          repetitions of each program, interleaved (default 3); medians reported
  -f, --fabric NAME     WEFT_FABRIC for Weft (default: \$WEFT_FABRIC, else ucx)
  -c, --colls LIST      barrier,bcast,allreduce,allgather,alltoall or all (default all)
  -m, --min SIZE        smallest size (default 8)
  -M, --max SIZE        largest size (default 4M)
  -i, --iters N         timed calls per size (default 1000; /10 above 8 KiB)
  -w, --warmup N        untimed calls per size (default 50; /10 above 8 KiB)
  -t, --time SEC        cap each size's timed loop at about SEC seconds (default 0.25; 0: none)
      --tls TLS         set UCX_TLS for all three (default: leave UCX to choose)
      --pin             pin rank r to CPU r mod ncpus in all three (-p; Open MPI --bind-to none)
      --only LIST       run only these of weft,mpich,ompi (default all three)
      --quick           -i 200 -w 10 -t 0.05 -M 1M (a smoke run)
      --csv FILE        write every median as CSV to FILE
      --samples FILE    write every run's value as CSV to FILE: prog,rep,collective,bytes,avg_us
      --timeout S       kill any single run after S seconds (default 900)
      --keep            keep the raw outputs (their folder is printed)
  -h, --help            this text

Launchers (their defaults, except what a single node needs):
  weft:  WEFT_FABRIC=<fabric> weftrun -n N weft-coll ...
  mpich: mpiexec.mpich -launcher fork -n N mpich-coll ...
  ompi:  mpirun.openmpi -n N --oversubscribe [--allow-run-as-root] ompi-coll ...
Latency is each rank's mean time per call of back-to-back calls, averaged over ranks
(avg_us of the programs).  ratio > 1: Weft slower than the faster of MPICH and Open MPI.
EOF
}

np=4
reps=3
fabric=${WEFT_FABRIC:-ucx}
colls=all
min_size=8
max_size=4M
iters=1000
warmup=50
time_cap=0.25
tls=
pin=0
only=weft,mpich,ompi
csv_out=
samples_out=
run_timeout=900
keep=0
build=

while [ $# -gt 0 ]; do
    case $1 in
    -n | --np) np=$2; shift 2 ;;
    -r | --reps) reps=$2; shift 2 ;;
    -f | --fabric) fabric=$2; shift 2 ;;
    -c | --colls) colls=$2; shift 2 ;;
    -m | --min) min_size=$2; shift 2 ;;
    -M | --max) max_size=$2; shift 2 ;;
    -i | --iters) iters=$2; shift 2 ;;
    -w | --warmup) warmup=$2; shift 2 ;;
    -t | --time) time_cap=$2; shift 2 ;;
    --tls) tls=$2; shift 2 ;;
    --pin) pin=1; shift ;;
    --only) only=$2; shift 2 ;;
    --quick) iters=200; warmup=10; time_cap=0.05; max_size=1M; shift ;;
    --csv) csv_out=$2; shift 2 ;;
    --samples) samples_out=$2; shift 2 ;;
    --timeout) run_timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    *)
        if [ -n "$build" ]; then echo "$0: more than one BUILD_DIR" >&2; exit 2; fi
        build=$1; shift ;;
    esac
done
build=${build:-./build}

die() { echo "$0: $*" >&2; exit 1; }
is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }
for v in np reps iters run_timeout; do
    is_uint "${!v}" && [ "${!v}" -gt 0 ] || die "--${v//_/-} needs a positive integer (got '${!v}')"
done
is_uint "$warmup" || die "--warmup needs an integer >= 0 (got '$warmup')"
command -v timeout >/dev/null || die "timeout not found (coreutils)"

progs=()
IFS=, read -r -a want <<<"$only"
for p in "${want[@]}"; do
    case $p in weft | mpich | ompi) progs+=("$p") ;; *) die "--only: unknown program '$p' (weft, mpich, ompi)" ;; esac
done
[ ${#progs[@]} -gt 0 ] || die "--only: nothing to run"

bin=$build/bin
declare -A exe=([weft]=$bin/weft-coll [mpich]=$bin/mpich-coll [ompi]=$bin/ompi-coll)
declare -A launcher_ok=()
for p in "${progs[@]}"; do
    [ -x "${exe[$p]}" ] || die "${exe[$p]} not found or not executable (build it, pass the build dir, or use --only)"
    case $p in
    weft) [ -x "$bin/weftrun" ] || die "$bin/weftrun not found" ;;
    mpich) command -v mpiexec.mpich >/dev/null || die "mpiexec.mpich not found (apt-get install mpich)" ;;
    ompi) command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin)" ;;
    esac
    launcher_ok[$p]=1
done

prog_args=(-c "$colls" -m "$min_size" -M "$max_size" -i "$iters" -w "$warmup" -t "$time_cap")
[ $pin = 1 ] && prog_args+=(-p)
ompi_launch=(mpirun.openmpi -n "$np" --oversubscribe)
[ "$(id -u)" = 0 ] && ompi_launch+=(--allow-run-as-root)
[ $pin = 1 ] && ompi_launch+=(--bind-to none)
if [ -n "$tls" ]; then export UCX_TLS=$tls; fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/weft-compare-coll.XXXXXX") || die "mktemp failed"
cleanup() { if [ $keep = 1 ]; then echo "raw outputs kept in $logs"; else rm -rf "$logs"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# run PROG REP: one run; its stdout in $logs/PROG.REP, stderr in $logs/PROG.REP.err.
run() {
    local p=$1 rep=$2 out=$logs/$1.$2 rc=0 t0 t1
    t0=$(date +%s.%N)
    case $p in
    weft) WEFT_FABRIC=$fabric timeout "$run_timeout" "$bin/weftrun" -n "$np" "${exe[weft]}" "${prog_args[@]}" ;;
    mpich) timeout "$run_timeout" mpiexec.mpich -launcher fork -n "$np" "${exe[mpich]}" "${prog_args[@]}" ;;
    ompi) timeout "$run_timeout" "${ompi_launch[@]}" "${exe[ompi]}" "${prog_args[@]}" ;;
    esac >"$out" 2>"$out.err" </dev/null || rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc != 0 ]; then
        echo "  $p run $rep failed (rc $rc, ${secs}s); stderr:" >&2
        tail -n 15 "$out.err" | sed 's/^/    /' >&2
        failed=1
    else
        echo "  $p run $rep: ${secs}s, $(grep -c '^[a-z]*,[0-9]' "$out") rows"
    fi
    if grep -q ',WRONG' "$out"; then
        echo "  $p run $rep: WRONG results at: $(grep ',WRONG' "$out" | cut -d, -f1,2 | tr '\n' ' ')" >&2
        failed=1
    fi
    # Rows: prog,rep,collective,bytes,avg_us
    awk -F, -v p="$p" -v r="$rep" '/^[a-z]+,[0-9]+,[0-9.]+/ { print p "," r "," $1 "," $2 "," $3 }' "$out" >>"$logs/all.csv"
}

echo "# collectives: weft (WEFT_FABRIC=$fabric) vs MPICH vs Open MPI, $np processes on $(nproc) CPUs, $reps interleaved repetition(s), medians"
echo "# sizes $min_size..$max_size, iters $iters, warmup $warmup (/10 above 8 KiB), time cap ${time_cap}s per size; UCX_TLS=${UCX_TLS:-<unset>}; pin=$pin; build dir $build"
[ "$np" -gt "$(nproc)" ] && echo "# $np processes > $(nproc) CPUs: oversubscribed (Open MPI then yields when idle; MPICH ch4 busy-polls: see bench/README.md)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
: >"$logs/all.csv"
for rep in $(seq 1 "$reps"); do
    echo "## repetition $rep/$reps"
    for p in "${progs[@]}"; do run "$p" "$rep"; done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$samples_out" ]; then
    { echo "prog,rep,collective,bytes,avg_us"; cat "$logs/all.csv"; } >"$samples_out" || failed=1
fi
for p in "${progs[@]}"; do
    h=$(grep -m1 "^# .*-coll:" "$logs/$p.1" 2>/dev/null | sed 's/^# //')
    [ -n "$h" ] && echo "# $h"
done

# Medians per (prog, collective, bytes); per-repetition ratios weft / min(mpich, ompi).
awk -F, -v csv="$csv_out" -v reps="$reps" '
    function median(list,   n, a, i, j, t) {
        n = split(list, a, " ")
        if (n == 0) return ""
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function fmt(v) { return v == "" ? "n/a" : sprintf("%.2f", v) }
    {
        key = $3 SUBSEP $4
        if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
        if (!($3 in cseen)) { cseen[$3] = 1; corder[++nc] = $3 }
        vals[$1, key] = vals[$1, key] " " $5
        one[$1, $2, key] = $5
    }
    END {
        if (csv != "") print "collective,bytes,weft_us,mpich_us,ompi_us,weft_over_best,median_rep_ratio,reps" > csv
        for (c = 1; c <= nc; c++) {
            coll = corder[c]
            printf "\n%s (us, median of %d)\n", coll, reps
            printf "%10s %12s %12s %12s %10s %10s\n", "bytes", "weft", "mpich", "ompi", "weft/best", "rep-ratio"
            for (k = 1; k <= nk; k++) {
                split(order[k], kk, SUBSEP)
                if (kk[1] != coll) continue
                w = median(vals["weft", order[k]]); m = median(vals["mpich", order[k]]); o = median(vals["ompi", order[k]])
                best = (m == "") ? o : (o == "" ? m : (m + 0 < o + 0 ? m : o))
                ratio = (w == "" || best == "" || best + 0 == 0) ? "n/a" : sprintf("%.2f", w / best)
                rl = ""
                for (r = 1; r <= reps; r++) {
                    wr = one["weft", r, order[k]]; mr = one["mpich", r, order[k]]; orr = one["ompi", r, order[k]]
                    br = (mr == "") ? orr : (orr == "" ? mr : (mr + 0 < orr + 0 ? mr : orr))
                    if (wr != "" && br != "" && br + 0 > 0) rl = rl " " wr / br
                }
                rr = median(rl); rr = rr == "" ? "n/a" : sprintf("%.2f", rr)
                printf "%10s %12s %12s %12s %10s %10s\n", kk[2], fmt(w), fmt(m), fmt(o), ratio, rr
                if (csv != "") print coll "," kk[2] "," w "," m "," o "," ratio "," rr "," reps > csv
            }
        }
    }' "$logs/all.csv"
echo
echo "# weft/best = median(weft) / min(median(mpich), median(ompi)); rep-ratio = median over repetitions"
echo "# of weft / min(mpich, ompi) within one repetition (steadier when the machine drifts). > 1: Weft slower."
exit $failed
