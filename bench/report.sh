#!/usr/bin/env bash
# report.sh [--smoke | --full] [-o DIR] [--only LIST] [--keep] [BUILD_DIR]: the performance
# report.  Runs the comparison scripts (compare-ucx.sh --ofi, compare-modes.sh --mpi,
# compare-coll.sh, galapagos-am.sh), each writing its samples as CSV, then bench/report/report.py
# turns them into DIR/performance.md with tables and DIR/performance/*.png (matplotlib).
#
#   (default)  the short form, about a minute on 2 cores (49 s on 2026-12-07): DIR = docs/ of this tree
#   --full     more sizes, runs and iterations, T up to 8, about 11 minutes (626 s on 2026-12-07)
#   --smoke    a few seconds of tiny runs into a temporary DIR, then checks that performance.md
#              and every PNG were written (the ctest bench.report_smoke); numbers meaningless
#
# A benchmark, not a test: only --smoke judges, and only that the files were produced.
# Exit status: 0; 1 when a comparison failed or (--smoke) a file is missing; 77 when
# python3-matplotlib is missing (ctest counts that as a skip).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

usage() {
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    echo "Options:"
    echo "  --only LIST   run only these sections: p2p,modes,coll,am (default all)"
    echo "  -o DIR        where performance.md and performance/ go (default: $root/docs; --smoke: a temp dir)"
    echo "  --keep        keep the --smoke directory and the comparison scripts' raw logs"
}
mode=short out= only=p2p,modes,coll,am keep=0 build=
while [ $# -gt 0 ]; do
    case $1 in
    --smoke) mode=smoke; shift ;;
    --full) mode=full; shift ;;
    -o) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
build=$(cd "${build:-$root/build}" 2>/dev/null && pwd) || { echo "$0: no build directory ${build:-$root/build}" >&2; exit 2; }
# The first python3 that has matplotlib: PATH's, else Debian's (a pyenv or venv python3 in PATH
# does not see Debian's python3-matplotlib).
py=
for p in "${WEFT_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import matplotlib' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
    echo "$0: skipped: neither python3 nor /usr/bin/python3 can import matplotlib (Debian: apt-get install python3-matplotlib; scripts/deps.sh)" >&2
    exit 77
fi
if [ "$mode" = smoke ] && [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/weft-report-smoke.XXXXXX") || exit 1
    [ $keep = 1 ] || trap 'rm -rf "$out"' EXIT
fi
out=${out:-$root/docs}
data=$out/performance/data
mkdir -p "$data" || exit 1
has() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
keep_arg=()
[ $keep = 1 ] && keep_arg=(--keep)

# Settings per form.
case $mode in
smoke)
    p2p_sizes=8,4K p2p_reps=1
    p2p_opts=(--ucx-lat-iters 2000 --ucx-bw-iters 2000 --lat-iters 200 --mr-iters 20 --timeout 30)
    modes_threads=1 modes_reps=1 modes_opts=(-i 20 --timeout 30)
    coll_np=2 coll_reps=1 coll_opts=(-c barrier,allreduce -M 64 -i 20 -w 2 -t 0.01 --timeout 60)
    am_reps=1 am_opts=(-k short,long -M 64 --node-only --args '-i 50 -w 5 -n 50 -r 1')
    ;;
short)
    p2p_sizes=8,64,512,4K,32K,256K,1M p2p_reps=3 p2p_opts=(--quick)
    modes_threads=1,2 modes_reps=3 modes_opts=(--quick)
    coll_np=2 coll_reps=3 coll_opts=(--quick)
    am_reps=3 am_opts=(-k short,medium,long -M 4K --node-only --args '-i 500 -n 500 -r 3')
    ;;
full)
    p2p_sizes=1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M p2p_reps=5 p2p_opts=()
    modes_threads=1,2,4,8 modes_reps=5 modes_opts=()
    coll_np=2 coll_reps=5 coll_opts=()
    am_reps=5 am_opts=(-k short,medium,long,long_seg -M 4K)
    ;;
esac

# The machine: cores, CPU model, whether it is a virtual machine.
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
ncpu=$(nproc)
virt=$(systemd-detect-virt 2>/dev/null || true)
[ -z "$virt" ] && grep -qw hypervisor /proc/cpuinfo && virt="hypervisor flag set"
[ "$virt" = none ] && virt=
where="$ncpu-core ${virt:+virtual machine ($virt), }${cpu_model:-unknown CPU}, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
[ "$ncpu" -le 2 ] && where="$where: the 2-core development VM, where other work (builds, tests) may share the cores"
start=$(date +%s)
ucx_tls=${UCX_TLS:-shm,self}
modes_pinning="All threads of rank 0 on core 0, all of rank 1 on core 1 (\`--cores 0,1\`)"
# Every form pins all threads of a rank to one core, so T>1 time-slices.
max_threads=${modes_threads##*,}
[ "$max_threads" -gt 1 ] && modes_pinning="$modes_pinning: at T=$max_threads, $((2 * max_threads)) busy-polling threads share two cores, so T>1 measures time-slicing as much as the library (raw UCP, which never yields, most of all); \`bench/fig3.sh\` spreads the threads over 2T cores where there are that many"
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "mode=$mode"
    echo "machine=$ncpu cores, ${cpu_model:-unknown CPU}${virt:+ (VM)}"
    echo "where=$where"
    echo "weft=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "ucx=$(ucx_info -v 2>/dev/null | awk '/Version/ { print $NF; exit }')"
    echo "libfabric=$(fi_info --version 2>/dev/null | awk '/^libfabric:/ { print $2 }')"
    echo "mpich=$(mpichversion 2>/dev/null | awk '/^MPICH Version:/ { print $NF }')"
    echo "ompi=$(ompi_info --version 2>/dev/null | awk '/^Open MPI/ { sub(/^v/, "", $NF); print $NF; exit }')"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "full_minutes=11"
    echo "ucx_tls=$ucx_tls"
    echo "ofi_prov=shm"
    echo "p2p_sizes=$p2p_sizes"
    echo "p2p_reps=$p2p_reps"
    echo "p2p_extra=${p2p_opts[*]:+ ${p2p_opts[*]}}"
    echo "modes_threads=$modes_threads"
    echo "modes_reps=$modes_reps"
    echo "modes_extra=${modes_opts[*]:+ ${modes_opts[*]}}"
    echo "modes_pinning=$modes_pinning."
    echo "coll_np=$coll_np"
    echo "coll_reps=$coll_reps"
    echo "coll_extra=${coll_opts[*]:+ ${coll_opts[*]}}"
    echo "am_reps=$am_reps"
    echo "am_extra=${am_opts[*]:+ ${am_opts[*]}}"
} >"$data/meta.env"
rm -f "$data"/{p2p,msgrate,coll,am}.csv

failed=0
# section NAME COMMAND...: one comparison, its output in DATA/NAME.log; a failure is recorded
# in meta.env, so that the report says why a section has no samples.
section() {
    local name=$1 rc=0 t0
    shift
    t0=$(date +%s)
    echo "== $name: $*"
    "$@" >"$data/$name.log" 2>&1 || rc=$?
    echo "   $name: rc $rc, $(($(date +%s) - t0)) s (log $data/$name.log)"
    if [ $rc != 0 ]; then
        failed=1
        tail -n 8 "$data/$name.log" | sed 's/^/   | /'
        echo "${name}_status=the comparison failed (rc $rc): $(grep -m1 -iE 'fail|error|not found|missing' "$data/$name.log" | cut -c1-200)" >>"$data/meta.env"
    fi
}
has p2p && section p2p "$here/compare-ucx.sh" --sizes "$p2p_sizes" --ofi -r "$p2p_reps" --tls "$ucx_tls" \
    ${p2p_opts[@]+"${p2p_opts[@]}"} --samples "$data/p2p.csv" ${keep_arg[@]+"${keep_arg[@]}"} "$build"
has modes && section modes "$here/compare-modes.sh" -T "$modes_threads" --mpi -r "$modes_reps" --tls "$ucx_tls" \
    ${modes_opts[@]+"${modes_opts[@]}"} --samples "$data/msgrate.csv" ${keep_arg[@]+"${keep_arg[@]}"} "$build"
has coll && section coll "$here/compare-coll.sh" -n "$coll_np" -r "$coll_reps" \
    ${coll_opts[@]+"${coll_opts[@]}"} --samples "$data/coll.csv" ${keep_arg[@]+"${keep_arg[@]}"} "$build"
has am && section am "$here/galapagos-am.sh" -r "$am_reps" ${am_opts[@]+"${am_opts[@]}"} \
    --samples "$data/am.csv" "$build"
{
    echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "elapsed_s=$(($(date +%s) - start))"
} >>"$data/meta.env"

"$py" "$here/report/report.py" "$data" "$out" || failed=1

if [ "$mode" = smoke ]; then
    # Every section that ran must have left samples, its plots (PNG by signature) and a
    # reference to them in performance.md.
    declare -A png=([p2p]="p2p_latency.png p2p_bandwidth.png" [modes]=msgrate_modes.png [coll]=collectives.png [am]=am.png)
    declare -A csvf=([p2p]=p2p.csv [modes]=msgrate.csv [coll]=coll.csv [am]=am.csv)
    [ -s "$out/performance.md" ] || { echo "smoke: $out/performance.md missing or empty" >&2; failed=1; }
    for s in p2p modes coll am; do
        has $s || continue
        [ "$(wc -l <"$data/${csvf[$s]}" 2>/dev/null || echo 0)" -ge 2 ] || { echo "smoke: no samples in $data/${csvf[$s]}" >&2; failed=1; }
        for p in ${png[$s]}; do
            if [ "$(head -c 8 "$out/performance/$p" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
                echo "smoke: $out/performance/$p missing or not a PNG" >&2
                failed=1
            elif ! grep -q "(performance/$p)" "$out/performance.md"; then
                echo "smoke: performance.md does not show $p" >&2
                failed=1
            fi
        done
    done
    echo "smoke: $([ $failed = 0 ] && echo OK || echo FAILED), $(($(date +%s) - start)) s$([ $keep = 1 ] && echo ", files in $out")"
fi
exit $failed
