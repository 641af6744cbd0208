#!/usr/bin/env bash
# fig3.sh [-r REPS] [BUILD_DIR]: threads and GPUs in one go, under 5 minutes.
#
#   1. The MPIX Stream paper's Figure 3: weft-msgrate -m single/global/vci/stream against
#      raw-ucx-msgrate (bench/compare-modes.sh).  With 16 or more CPUs: T = 1,2,4,8, a CPU per
#      thread (--spread); with fewer: T <= 2 with rank 0's threads on CPU 0 and rank 1's on
#      CPU 1 (T=2 is then oversubscribed), and it says so.
#   2. The enqueue latency: weft-enqueue-lat through weftrun -n 2, WEFT_ENQUEUE=memops against
#      hostfn, host and device buffers, when nvidia-smi lists a GPU and weft-enqueue-lat is
#      built; otherwise it says why it skipped.
#
# BUILD_DIR (default ./build) must hold bin/{weftrun,weft-msgrate,raw-ucx-msgrate} (and
# bin/weft-enqueue-lat for step 2); when they are missing it configures and builds just those
# there (-DWEFT_WITH_CUDA=ON where nvcc exists).  With $OUT set, the printout also goes to
# $OUT/fig3-report.txt and the samples to $OUT/fig3-msgrate.csv.  A benchmark: it prints
# numbers, judges nothing; exit status 1 only when a step could not run.
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=3
build=
while [ $# -gt 0 ]; do
    case $1 in
    -r) reps=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
build=${build:-$root/build}
start=$(date +%s)
budget=290 # seconds for everything; each step gets what is left

main() {
    local failed=0 ncpu tlist gpu= why_no_gpu=
    ncpu=$(nproc)
    echo "fig3.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $ncpu CPUs ($(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)), build $build"
    if ! command -v nvidia-smi >/dev/null; then
        why_no_gpu="no nvidia-smi on this machine"
    elif timeout 20 nvidia-smi -L 2>/dev/null | grep -q '^GPU 0'; then
        gpu=$(timeout 20 nvidia-smi -L | head -1)
    else
        why_no_gpu="nvidia-smi lists no GPU"
    fi
    [ -z "$gpu" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && why_no_gpu="$why_no_gpu; no libcuda.so.1 in the ldconfig cache"
    echo "device: ${gpu:-none ($why_no_gpu)}"

    local need=(weftrun weft-msgrate raw-ucx-msgrate) missing=() t
    [ -n "$gpu" ] && need+=(weft-enqueue-lat)
    for t in "${need[@]}"; do [ -x "$build/bin/$t" ] || missing+=("$t"); done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== build ${missing[*]} in $build"
        local cuda=OFF
        command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] && cuda=ON
        if ! { timeout 100 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_BUILD_BENCH=ON \
            -DWEFT_WITH_CUDA=$cuda "-DWEFT_TEST_DIRS=" >"$build.configure.log" 2>&1 &&
            timeout 200 cmake --build "$build" -j"$ncpu" --target "${missing[@]}" >"$build.build.log" 2>&1; }; then
            echo "build FAILED (logs $build.configure.log, $build.build.log):"
            tail -n 20 "$build.build.log" 2>/dev/null || tail -n 20 "$build.configure.log"
            return 1
        fi
    fi

    if [ "$ncpu" -ge 16 ]; then
        tlist=1,2,4,8
        echo "== Figure 3: T=$tlist, a CPU per thread (--spread), $reps repetitions"
        spread=(--spread)
    else
        tlist=1,2
        echo "== Figure 3 at T<=2 only: $ncpu CPUs here (T=4,8 need 16); rank 0's threads on CPU 0, rank 1's on CPU 1"
        spread=(--cores 0,1)
    fi
    local left=$((start + budget - $(date +%s) - 60))
    [ $left -lt 30 ] && left=30
    if ! timeout "$left" "$root/bench/compare-modes.sh" -T "$tlist" "${spread[@]}" -r "$reps" -i 5000 --timeout 40 \
        ${OUT:+--samples "$OUT/fig3-msgrate.csv"} "$build"; then
        echo "Figure 3: some runs failed or ran out of time (above)"
        failed=1
    fi

    echo
    if [ -z "$gpu" ]; then
        echo "== enqueue latency: skipped: no device ($why_no_gpu); the GPU queue needs one, nothing to measure here"
    elif [ ! -x "$build/bin/weft-enqueue-lat" ]; then
        echo "== enqueue latency: skipped: $build/bin/weft-enqueue-lat not built (no nvcc at configure time?)"
        failed=1
    else
        echo "== enqueue latency: weft-enqueue-lat -i 1000 -w 100, WEFT_ENQUEUE=memops vs hostfn, median of $reps runs each"
        local mech buf flag r out line
        for buf in host device; do
            flag=
            [ $buf = device ] && flag=-d
            for mech in memops hostfn; do
                local meds=()
                for r in $(seq 1 "$reps"); do
                    [ $((start + budget - $(date +%s))) -lt 15 ] && { echo "  out of time"; break 3; }
                    out=$(WEFT_ENQUEUE=$mech timeout -k 5 40 "$build/bin/weftrun" -n 2 "$build/bin/weft-enqueue-lat" -i 1000 -w 100 $flag 2>&1)
                    line=$(echo "$out" | grep -m1 'median_us=')
                    if [ -n "$line" ]; then
                        meds+=("$(echo "$line" | tr ' ' '\n' | sed -n 's/^median_us=//p')")
                    else
                        echo "  $mech $buf run $r: no result: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
                        failed=1
                    fi
                done
                printf '  %-7s %-7s median_us of each run: %s\n' "$mech" "$buf" "${meds[*]-none}"
            done
        done
    fi
    echo "fig3.sh: done in $(($(date +%s) - start)) s"
    return $failed
}

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    main 2>&1 | tee "$OUT/fig3-report.txt"
    exit "${PIPESTATUS[0]}"
fi
main
