#!/usr/bin/env bash
# Builds and runs Weft's libFuzzer targets (tests/fuzz; see tests/fuzz/README.md).
#
#   scripts/fuzz.sh [-r RUNS] [-T SECONDS] [-t TARGET[,TARGET...]] [-j N] [-w DIR] [-m]
#                                                                     fuzz each target
#   scripts/fuzz.sh --regress [-t TARGET...]                          replay kept inputs
#
# Fuzzing: each target runs RUNS executions (default 200000), or for SECONDS (-T; default no
# limit) if that comes first, starting from a copy of its corpus (tests/fuzz/corpus/<target>/)
# in a scratch directory (-w DIR, default a fresh /tmp/weft-fuzz.XXXXXX): nothing is written
# into the repository, unless -m: then the inputs of each run that reach code or branches the
# corpus did not are merged into tests/fuzz/corpus/<target>/ (libFuzzer -merge=1), so that later
# runs start where this one ended.  -j N runs N targets at once (default 1); the build uses
# every core.  A summary gives, per target, the executions done, the time, the exit status and
# the crash file, if any; the script exits 1 when any target failed.
#
# --regress runs every file of tests/fuzz/regress/<target>/ (inputs that once crashed, kept
# after the fix) and of the seed corpus through its target once; exits 1 on any failure.
#
# Needs clang with libFuzzer (Debian: clang libclang-rt-14-dev), cmake, nlohmann-json3-dev.
# The build goes to $WEFT_FUZZ_BUILD (default build-fuzz/ at the repository root).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_FUZZ_BUILD:-$root/build-fuzz}
all_targets=(hex info am_wire gal_frame gal_handshake gal_cluster kvs_server kvs_client pmi1 env datatype)
# Largest input per target: a packet, a stream of a few packets, a file, a script.
declare -A max_len=([hex]=4096 [info]=2048 [am_wire]=8600 [gal_frame]=40000 [gal_handshake]=512 [gal_cluster]=8192
                    [kvs_server]=4096 [kvs_client]=4096 [pmi1]=4096 [env]=1024
                    [datatype]=512)

runs=200000
max_time=0
merge=0
jobs=1
regress=0
work=""
targets=()
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -r) runs=${2:?}; shift 2 ;;
    -T) max_time=${2:?}; shift 2 ;;
    -m) merge=1; shift ;;
    -t) IFS=, read -ra more <<<"${2:?}"; targets+=("${more[@]}"); shift 2 ;;
    -j) jobs=${2:?}; shift 2 ;;
    -w) work=${2:?}; shift 2 ;;
    --regress) regress=1; shift ;;
    -h|--help) usage ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -n "${max_len[$t]:-}" ] || { echo "fuzz.sh: no target '$t' (targets: ${all_targets[*]})" >&2; exit 2; }
done
[[ "$runs" =~ ^[0-9]+$ && "$max_time" =~ ^[0-9]+$ && "$jobs" =~ ^[1-9][0-9]*$ ]] ||
  { echo "fuzz.sh: -r, -T and -j take numbers" >&2; exit 2; }

# ---- Build ----
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root/tests/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang >/dev/null ||
    { echo "fuzz.sh: configuring $build failed" >&2; exit 2; }
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log" >&2; echo "fuzz.sh: build failed (log: $build/build.log)" >&2; exit 2; }

# ---- Regression inputs ----
if [ "$regress" = 1 ]; then
  failed=0
  for t in "${targets[@]}"; do
    files=()
    for d in "$root/tests/fuzz/regress/$t" "$root/tests/fuzz/corpus/$t"; do
      [ -d "$d" ] && while IFS= read -r f; do files+=("$f"); done < <(find "$d" -type f | sort)
    done
    if [ ${#files[@]} -eq 0 ]; then
      printf '%-12s no inputs\n' "$t"
      continue
    fi
    log=$(mktemp /tmp/weft-fuzz-regress.XXXXXX)
    if "$build/fuzz_$t" -timeout=60 "${files[@]}" >"$log" 2>&1; then
      printf '%-12s ok      %d inputs\n' "$t" "${#files[@]}"
      rm -f "$log"
    else
      printf '%-12s FAILED  %d inputs (log: %s)\n' "$t" "${#files[@]}" "$log"
      grep -E "^Running:|SUMMARY|invariant failed|runtime error" "$log" | tail -4 | sed 's/^/    /'
      failed=1
    fi
  done
  exit $failed
fi

# ---- Fuzzing ----
[ -n "$work" ] || work=$(mktemp -d /tmp/weft-fuzz.XXXXXX)
mkdir -p "$work"
echo "fuzz.sh: $runs executions per target$([ "$max_time" = 0 ] || echo " or $max_time s"), scratch directory $work"

run_target() {
  local t=$1 dir=$work/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r "$root/tests/fuzz/corpus/$t/." "$dir/corpus/" 2>/dev/null
  local start end rc
  start=$(date +%s.%N)
  (cd "$dir" && exec "$build/fuzz_$t" -runs="$runs" -max_total_time="$max_time" -max_len="${max_len[$t]}" -timeout=60 \
     -artifact_prefix="$dir/artifacts/" -print_final_stats=1 corpus >"$dir/log" 2>&1)
  rc=$?
  end=$(date +%s.%N)
  # Executions: the final stats, or the last status line when the run stopped early.
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$dir/log" | tail -1 | tr -d '#')
  local crash
  crash=$(find "$dir/artifacts" -type f | head -1)
  echo "$t ${rc} ${execs:-0} $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') ${crash:--}" >"$dir/result"
}

for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  echo "fuzz.sh: running $t"
  run_target "$t" &
done
wait

failed=0
printf '\n%-12s %-7s %12s %9s %9s  %s\n' target status executions seconds exec/s crash
for t in "${targets[@]}"; do
  read -r _ rc execs secs crash <"$work/$t/result"
  rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? e / s : 0) }')
  status=ok
  [ "$rc" = 0 ] || { status="rc=$rc"; failed=1; }
  printf '%-12s %-7s %12s %9.1f %9s  %s\n' "$t" "$status" "$execs" "$secs" "$rate" "$crash"
  [ "$rc" = 0 ] || grep -E "SUMMARY|invariant failed|runtime error" "$work/$t/log" | head -3 | sed 's/^/    /'
done
echo "logs: $work/<target>/log"

# ---- Merge into the repository's corpus (-m) ----
if [ "$merge" = 1 ] && [ "$failed" = 0 ]; then
  for t in "${targets[@]}"; do
    before=$(find "$root/tests/fuzz/corpus/$t" -type f | wc -l)
    "$build/fuzz_$t" -merge=1 -max_len="${max_len[$t]}" -timeout=60 "$root/tests/fuzz/corpus/$t" "$work/$t/corpus" \
      >"$work/$t/merge.log" 2>&1 || { echo "fuzz.sh: merging $t failed (log: $work/$t/merge.log)" >&2; failed=1; }
    printf '%-12s corpus %d -> %d inputs\n' "$t" "$before" "$(find "$root/tests/fuzz/corpus/$t" -type f | wc -l)"
  done
fi
exit $failed
