#!/usr/bin/env bash
# run-gpu.sh [--keep | --prebuilt PACK]: the GPU checks, in one go, on a machine with a CUDA GPU.
#
# Checks the tools (no network: it installs nothing), configures a fresh build-gpu (--keep:
# reuse it) with only the gpu (and hostq) test folders, builds only what those need, runs
# ctest -L gpu (then the hostq tests), then weft-enqueue-lat through weftrun -n 2 for
# WEFT_ENQUEUE=memops|hostfn and host|pinned|device buffers, without and (where
# nvidia-cuda-mps-control is there) with CUDA MPS, and prints a summary.  Every step
# has a timeout and the whole run stays under 5 minutes.  When $OUT is set, everything printed
# also goes to $OUT/gpu-report.txt, with the full test log in $OUT/ctest-LastTest.log.
# --prebuilt PACK runs a build made elsewhere and packed by tests/gpu/pack-gpu.sh, for a GPU
# machine without the build's dependencies: nothing is configured or built, the pack's build
# is linked at the path it was built in (ctest's files name it), and its libraries come first.
# Exit status: 0 when every step passed (skipped tests count as passed), else 1; 3 when a
# required tool is missing.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_GPU_BUILD:-$root/build-gpu}  # WEFT_GPU_BUILD: another build directory
keep=0
prebuilt=""
case "${1:-}" in
    --keep) keep=1 ;;
    --prebuilt)
        prebuilt=$(cd "${2:?--prebuilt needs the folder pack-gpu.sh wrote}" && pwd)
        build=$(cat "$prebuilt/origin")
        if [ ! -e "$build" ]; then
            mkdir -p "$(dirname "$build")"
            ln -s "$prebuilt/build" "$build"
        fi
        export LD_LIBRARY_PATH=$prebuilt/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        ;;
esac
jobs=$(nproc 2>/dev/null || echo 16)
[ "$jobs" -gt 16 ] && jobs=16
start=$(date +%s)
budget=285  # seconds for everything; each step gets at most what is left
report=${OUT:+$OUT/gpu-report.txt}

left() { echo $((start + budget - $(date +%s))); }
# step_timeout LIMIT: LIMIT, or what is left of the budget if less (at least 5 s).
step_timeout() {
    local l
    l=$(left)
    [ "$l" -lt "$1" ] && set -- "$l"
    [ "$1" -lt 5 ] && set -- 5
    echo "$1"
}
section() { printf '\n==== %s (%ds elapsed)\n' "$*" $(($(date +%s) - start)); }

summary=()
failed=0
gpu_listed=0
note() { summary+=("$1"); }

check_tools() {
    section "tools"
    local missing=()
    # nvcc is often installed off PATH.
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export PATH=/usr/local/cuda/bin:$PATH
    fi
    local tools=(cmake g++ nvcc pkg-config timeout)
    [ -n "$prebuilt" ] && tools=(ctest timeout)
    for t in "${tools[@]}"; do
        if command -v "$t" >/dev/null; then
            printf '  %-12s %s\n' "$t" "$(command -v "$t")"
        else
            printf '  %-12s MISSING\n' "$t"
            missing+=("$t")
        fi
    done
    if [ -n "$prebuilt" ]; then
        printf '  %-12s %s (packed build of %s)\n' prebuilt "$prebuilt" "$build"
    elif command -v cmake >/dev/null; then
        local v
        v=$(cmake --version | head -1 | awk '{print $3}')
        printf '  %-12s %s (3.25 or newer needed)\n' "cmake ver" "$v"
        if [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -1)" != "3.25" ]; then
            missing+=("cmake>=3.25")
        fi
    fi
    command -v nvcc >/dev/null && printf '  %-12s %s\n' "nvcc ver" "$(nvcc --version | tail -2 | head -1)"
    if [ -n "$prebuilt" ]; then
        :
    elif [ -f /usr/include/gtest/gtest.h ] || ls /usr/lib/*/cmake/GTest/GTestConfig.cmake /usr/lib/cmake/GTest/GTestConfig.cmake \
        /usr/local/lib/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1; then
        printf '  %-12s found\n' gtest
    else
        printf '  %-12s MISSING (libgtest-dev: /usr/include/gtest/gtest.h)\n' gtest
        missing+=(gtest)
    fi
    if [ -n "$prebuilt" ]; then
        :
    elif pkg-config --exists ucx 2>/dev/null; then
        printf '  %-12s %s\n' ucx "$(pkg-config --modversion ucx)"
    else
        printf '  %-12s MISSING (pkg-config ucx: libucx-dev; the default fabric)\n' ucx
        missing+=(ucx)
    fi
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        printf '  %-12s %s\n' libcuda "$(ldconfig -p | grep -m1 'libcuda\.so\.1' | awk '{print $NF}')"
    else
        printf '  %-12s not in the ldconfig cache (tests will skip: no driver)\n' libcuda
    fi
    if command -v nvidia-smi >/dev/null; then
        printf '  %-12s driver %s\n' nvidia-smi \
            "$(timeout 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1)"
    else
        printf '  %-12s MISSING (no GPU listing; tests still run)\n' nvidia-smi
    fi
    printf '  %-12s %s, %s CPUs\n' host "$(uname -srm)" "$(nproc)"
    if [ ${#missing[@]} -gt 0 ]; then
        echo "MISSING: ${missing[*]}: cannot build; nothing else was done"
        note "tools: MISSING ${missing[*]}"
        return 3
    fi
    note "tools: ok"
}

configure_and_build() {
    section "configure $build"
    [ "$keep" = 0 ] && rm -rf "$build"
    mkdir -p "$build"
    local dirs=gpu
    [ -f "$root/tests/hostq/CMakeLists.txt" ] && dirs="gpu;hostq"
    if ! timeout "$(step_timeout 90)" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DWEFT_TEST_DIRS=$dirs" -DWEFT_BUILD_BENCH=ON -DWEFT_WITH_CUDA=ON -DWEFT_WITH_HIP=OFF \
        -DWEFT_WITH_SYCL=OFF >"$build/configure.log" 2>&1; then
        tail -40 "$build/configure.log"
        echo "configure FAILED (log above)"
        note "configure: FAILED"
        return 1
    fi
    grep -E 'weft: |tests/gpu|bench:' "$build/configure.log"
    note "configure: ok (test folders: $dirs)"

    section "build (-j$jobs)"
    local targets=(--target weft-gpu-tests)
    local have_bench=0
    if cmake --build "$build" --target help 2>/dev/null | grep -q 'weft-enqueue-lat'; then
        targets+=(weft-enqueue-lat)
        have_bench=1
    fi
    if ! timeout "$(step_timeout 180)" cmake --build "$build" -j"$jobs" "${targets[@]}" >"$build/build.log" 2>&1; then
        grep -E -B2 -A8 'error|Error' "$build/build.log" | tail -60
        echo "build FAILED (errors above)"
        note "build: FAILED"
        return 1
    fi
    # The hostq tests: every target of their folder (with what those depend on).
    if [ -f "$root/tests/hostq/CMakeLists.txt" ] && [ -d "$build/tests/hostq" ]; then
        if ! timeout "$(step_timeout 120)" cmake --build "$build/tests/hostq" -j"$jobs" >>"$build/build.log" 2>&1; then
            grep -E -B2 -A8 'error|Error' "$build/build.log" | tail -40
            echo "build of tests/hostq FAILED"
            note "build hostq: FAILED"
            failed=1
        fi
    fi
    # bench/CMakeLists.txt may not list the benchmark yet: build it by hand then.
    if [ "$have_bench" = 0 ]; then
        echo "no weft-enqueue-lat target: compiling bench/enqueue-lat.cu with nvcc"
        if ! timeout "$(step_timeout 90)" nvcc -std=c++17 -O2 -I"$root/api" -I"$root/bench" \
            -o "$build/bin/weft-enqueue-lat" "$root/bench/enqueue-lat.cu" -L"$build/lib" -lweft \
            -Xlinker "-rpath=$build/lib" >>"$build/build.log" 2>&1; then
            tail -20 "$build/build.log"
            note "build bench: FAILED"
            failed=1
        fi
    fi
    note "build: ok"
}

# run_ctest NAME ARGS...: one ctest run; its result line goes to the summary.
run_ctest() {
    local name=$1
    shift
    local log=$build/ctest-$name.out
    (cd "$build" && timeout -k 5 "$(step_timeout 200)" ctest --output-on-failure --timeout 90 "$@") 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local line
    line=$(grep -E 'tests passed|No tests were found' "$log" | tail -1)
    local skipped
    skipped=$(grep -c '\*\*\*Skipped' "$log")
    note "ctest $name: ${line:-no result (rc $rc)}; $skipped skipped"
    [ "$rc" = 0 ] || failed=1
    # A skip on a machine that lists a GPU means the tests could not use it: say why, and fail.
    if [ "$skipped" -gt 0 ] && [ "$gpu_listed" = 1 ]; then
        note "  skipped although nvidia-smi lists a GPU: $(grep -m1 -hE 'no CUDA device|unusable|another process' \
            "$build/Testing/Temporary/LastTest.log" 2>/dev/null)"
        failed=1
    fi
    if [ -n "${OUT:-}" ] && [ -f "$build/Testing/Temporary/LastTest.log" ]; then
        cp "$build/Testing/Temporary/LastTest.log" "$OUT/ctest-$name-LastTest.log"
    fi
}

run_tests() {
    section "GPUs"
    if command -v nvidia-smi >/dev/null; then
        timeout 20 nvidia-smi -L 2>&1 | tee "$build/gpus.txt"
        grep -q '^GPU 0' "$build/gpus.txt" && gpu_listed=1
    else
        echo "nvidia-smi not found"
    fi
    section "ctest -L gpu"
    run_ctest gpu -L gpu
    if [ -f "$root/tests/hostq/CMakeLists.txt" ]; then
        section "ctest: hostq (every test not labelled gpu)"
        run_ctest hostq -LE gpu
    fi
}

bench_rows=()
# The benchmark's two ranks share GPU 0.  Without CUDA MPS the GPU time-slices between the two
# processes' contexts, and a round trip waits for slices (about 300 us on an H200, against
# 15 us under MPS), so the rows are measured both ways where MPS is there.
mps_control=$(command -v nvidia-cuda-mps-control || ls /usr/local/nvidia/bin/nvidia-cuda-mps-control 2>/dev/null || true)
mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY=${TMPDIR:-/tmp}/weft-mps-pipe CUDA_MPS_LOG_DIRECTORY=${TMPDIR:-/tmp}/weft-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    "$mps_control" -d && sleep 2
}
mps_stop() {
    echo quit | "$mps_control" >/dev/null 2>&1
    sleep 1
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
run_bench() {
    section "weft-enqueue-lat (weftrun -n 2)"
    local exe=$build/bin/weft-enqueue-lat
    if [ ! -x "$exe" ]; then
        echo "no $exe"
        note "bench: not built"
        failed=1
        return
    fi
    local modes=(no)
    [ -n "$mps_control" ] && modes+=(yes)
    local mps mech buf flag out rc line
    for mps in "${modes[@]}"; do
        if [ "$mps" = yes ] && ! mps_start; then
            bench_rows+=("mps|-|-|nvidia-cuda-mps-control -d failed")
            continue
        fi
        for mech in memops hostfn; do
            for buf in host pinned device; do
                case $buf in host) flag= ;; pinned) flag=-P ;; device) flag=-d ;; esac
                [ "$(left)" -lt 10 ] && { bench_rows+=("$mps|$mech|$buf|not run: out of time"); continue; }
                echo "-- MPS $mps: WEFT_ENQUEUE=$mech weft-enqueue-lat -i 1000 -w 100 $flag"
                out=$(WEFT_ENQUEUE=$mech timeout -k 5 "$(step_timeout 45)" "$build/bin/weftrun" -n 2 "$exe" -i 1000 -w 100 $flag 2>&1)
                rc=$?
                echo "$out" | tail -15
                line=$(echo "$out" | grep -m1 'median_us=')
                if [ -n "$line" ]; then
                    bench_rows+=("$mps|$mech|$buf|$(field median_us "$line")|$(field mean_us "$line")|$(field p99_us "$line")|$(field wall_us "$line")|$(field echo "$line")|rc $rc")
                else
                    local why
                    why=$(echo "$out" | sed -n 's/^weft-enqueue-lat: rank 0: //p' | head -1)
                    [ "$rc" = 124 ] && why="timeout"
                    bench_rows+=("$mps|$mech|$buf|no result (rc $rc${why:+: $why})")
                fi
                if [ "$rc" != 0 ] && { [ "$rc" != 77 ] || [ "$gpu_listed" = 1 ]; }; then failed=1; fi
            done
        done
        [ "$mps" = yes ] && mps_stop
    done
}
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

print_summary() {
    section "summary"
    local s
    for s in "${summary[@]}"; do echo "  $s"; done
    if [ ${#bench_rows[@]} -gt 0 ]; then
        echo
        printf '  %-4s %-8s %-7s %10s %10s %10s %10s %6s %s\n' mps mechanism buffer median_us mean_us p99_us wall_us echo status
        local r
        for r in "${bench_rows[@]}"; do
            IFS='|' read -r p m b a c d e f g <<<"$r"
            if [ -z "$c" ]; then
                printf '  %-4s %-8s %-7s %s\n' "$p" "$m" "$b" "$a"
            else
                printf '  %-4s %-8s %-7s %10s %10s %10s %10s %6s %s\n' "$p" "$m" "$b" "$a" "$c" "$d" "$e" "$f" "$g"
            fi
        done
    fi
    echo
    echo "  result: $([ "$failed" = 0 ] && echo PASS || echo FAIL), $(($(date +%s) - start)) s"
}

main() {
    echo "run-gpu.sh: $root, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    check_tools || { local rc=$?; print_summary; return $rc; }
    if [ -n "$prebuilt" ] || configure_and_build; then
        run_tests
        run_bench
    else
        failed=1
    fi
    print_summary
    [ "$failed" = 0 ]
}

if [ -n "$report" ]; then
    mkdir -p "$OUT"
    main "$@" 2>&1 | tee "$report"
    exit "${PIPESTATUS[0]}"
else
    main "$@"
fi
