#!/usr/bin/env bash
# Compare Weft over its UCX plugin with UCX itself (ucx_perftest), on the same transport and
# the same two cores: 8-byte one-way latency and 8-byte message rate.
#
#   bench/compare-ucx.sh [options] [BUILD_DIR]        (BUILD_DIR defaults to ./build)
#
# Uses BUILD_DIR/bin/weftrun, BUILD_DIR/bin/weft-pingpong, BUILD_DIR/bin/weft-msgrate (the same
# layout holds for an install prefix) and ucx_perftest from PATH.  Every measurement is repeated
# (-r, default 5) with the four programs interleaved, and the median is reported.
#
# This is a benchmark, not a test: it prints numbers and judges nothing.
set -u -o pipefail

usage() {
    cat <<EOF
Usage: $0 [options] [BUILD_DIR]
Runs ucx_perftest tag_lat/tag_bw and weft-pingpong/weft-msgrate (WEFT_FABRIC=ucx) on the same
UCX transport, each side pinned to its own core, and prints medians and Weft/UCX ratios.

  -r, --reps N          repetitions of each measurement (default 5); the median is reported
      --tls TLS         UCX_TLS for both sides (default: \$UCX_TLS, else "shm,self")
      --cores A,B       the two cores (default 0,1): UCX server/client and Weft rank 0/1
      --ucx-lat-iters N ucx_perftest tag_lat iterations (default 1000000)
      --ucx-bw-iters N  ucx_perftest tag_bw iterations (default 2000000)
      --lat-iters N     weft-pingpong timed round trips (default 200000)
      --mr-iters N      weft-msgrate timed windows of 64 (default 20000)
      --quick           10x fewer iterations everywhere (a smoke run)
      --ucx-only        run only the ucx_perftest side
      --sweep           also run one full weft-pingpong size sweep (0 B .. 4 MiB) and print it
      --csv FILE        write the medians and ratios as CSV to FILE
      --timeout S       kill any single run after S seconds (default 120)
      --keep            keep the raw logs (their folder is printed)
  -h, --help            this text

Notes: latency is one-way (round trip / 2) on both sides: ucx_perftest tag_lat "overall_lat",
weft-pingpong "latency_us".  Message rate: ucx_perftest tag_bw "overall_mr" streams tagged sends
without a per-window ack, weft-msgrate uses window 64 + a 4-byte ack per window (osu_mbw_mr).
EOF
}

reps=5
tls=${UCX_TLS:-shm,self}
cores=0,1
ucx_lat_iters=1000000
ucx_bw_iters=2000000
lat_iters=200000
mr_iters=20000
quick=0
ucx_only=0
sweep=0
csv_out=
run_timeout=120
keep=0
build=

while [ $# -gt 0 ]; do
    case $1 in
    -r | --reps) reps=$2; shift 2 ;;
    --tls) tls=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --ucx-lat-iters) ucx_lat_iters=$2; shift 2 ;;
    --ucx-bw-iters) ucx_bw_iters=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --mr-iters) mr_iters=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --ucx-only) ucx_only=1; shift ;;
    --sweep) sweep=1; shift ;;
    --csv) csv_out=$2; shift 2 ;;
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
for v in reps ucx_lat_iters ucx_bw_iters lat_iters mr_iters run_timeout; do
    is_uint "${!v}" && [ "${!v}" -gt 0 ] || die "--${v//_/-} needs a positive integer (got '${!v}')"
done
if [ $quick = 1 ]; then
    ucx_lat_iters=$((ucx_lat_iters / 10)); ucx_bw_iters=$((ucx_bw_iters / 10))
    lat_iters=$((lat_iters / 10)); mr_iters=$((mr_iters / 10))
fi
core0=${cores%%,*}
core1=${cores#*,}
is_uint "$core0" && is_uint "$core1" && [ "$core0" != "$core1" ] ||
    die "--cores needs two different core numbers, e.g. 0,1 (got '$cores')"

command -v ucx_perftest >/dev/null || die "ucx_perftest not found in PATH (Debian: apt-get install ucx-utils)"
command -v taskset >/dev/null || die "taskset not found (util-linux)"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
allowed=$(taskset -pc $$ 2>/dev/null | sed 's/.*: *//')
for c in "$core0" "$core1"; do
    taskset -c "$c" true 2>/dev/null || die "cannot pin to core $c (allowed here: ${allowed:-?})"
done

weftrun=$build/bin/weftrun
pingpong=$build/bin/weft-pingpong
msgrate=$build/bin/weft-msgrate
if [ $ucx_only = 0 ]; then
    for f in "$weftrun" "$pingpong" "$msgrate"; do
        [ -x "$f" ] || die "$f not found or not executable (build it, pass the build dir, or use --ucx-only)"
    done
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/weft-compare-ucx.XXXXXX") || die "mktemp failed"
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
    if [ $keep = 1 ]; then echo "raw logs kept in $logs"; else rm -rf "$logs"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port range of our own, so that concurrent runs (and earlier runs in TIME_WAIT) do not clash.
port=$((20000 + ($$ % 20000)))
next_port() {
    local hex
    for _ in $(seq 1 200); do
        port=$((port + 1)); [ $port -gt 60000 ] && port=20001
        hex=$(printf '%04X' $port)
        # Skip ports that some socket already uses (local address column, IPv4 and IPv6).
        awk 'NR > 1 { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -qi ":$hex\$" || return 0
    done
}

# parse_ucx FILE COLUMN: COLUMN of the final result of a ucx_perftest client run.
# Prefers the CSV of -v (header "iterations,...,overall_lat,...,overall_mr"; the final line is the
# last one starting with a digit: periodic reports start with "[thread N]"); falls back to the
# "Final:" line of the table format.
parse_ucx() {
    awk -v col="$2" '
        BEGIN { n = split("iterations 50.0_percentile_lat avg_lat overall_lat avg_bw overall_bw avg_mr overall_mr", names, " ")
                for (i = 1; i <= n; i++) pos[names[i]] = i }
        /^iterations,/ { nf = split($0, h, ","); for (i = 1; i <= nf; i++) { sub(/\r$/, "", h[i]); csvpos[h[i]] = i }; next }
        /^[0-9][0-9.]*(,[0-9.eE+-]+)+[ \r]*$/ { csvlast = $0 }
        /^Final:/ { sub(/^Final:[ \t]*/, ""); tablelast = $0 }
        END {
            if (csvlast != "" && (col in csvpos)) { split(csvlast, f, ","); v = f[csvpos[col]] }
            else if (tablelast != "" && (col in pos)) { split(tablelast, f, " "); v = f[pos[col]] }
            gsub(/[ \r]/, "", v)
            if (v ~ /^[0-9.eE+-]+$/) print v
        }' "$1"
}

# run_ucx TEST ITERS LOGFILE: server on core0 in the background, client on core1 to 127.0.0.1.
run_ucx() {
    local test=$1 iters=$2 log=$3 srvlog=$3.server warm=$(( $2 / 100 > 10000 ? 10000 : $2 / 100 + 1 ))
    next_port
    UCX_TLS=$tls timeout "$run_timeout" taskset -c "$core0" \
        ucx_perftest -t "$test" -s 8 -n "$iters" -w "$warm" -p "$port" -v >"$srvlog" 2>&1 &
    server_pid=$!
    local i
    local hex i
    hex=$(printf '%04X' "$port")
    for i in $(seq 1 200); do # wait (<= 10 s) until the server listens (TCP state 0A = LISTEN)
        awk 'NR > 1 && $4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
            grep -qi ":$hex\$" && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    local rc=0
    UCX_TLS=$tls timeout "$run_timeout" taskset -c "$core1" \
        ucx_perftest 127.0.0.1 -t "$test" -s 8 -n "$iters" -w "$warm" -p "$port" -v >"$log" 2>&1 || rc=$?
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    if [ $rc != 0 ]; then
        echo "  ucx_perftest -t $test failed (rc $rc); client log:" >&2
        sed 's/^/    /' "$log" | tail -n 15 >&2
        echo "  server log:" >&2; sed 's/^/    /' "$srvlog" | tail -n 15 >&2
        return 1
    fi
}

# run_weft LOGFILE CSVFILE PROG ARGS...: both ranks under taskset core0,core1; -p in the benchmark
# pins rank r to the r-th of those cores.
run_weft() {
    local log=$1 csv=$2; shift 2
    local rc=0
    rm -f "$csv"
    WEFT_FABRIC=ucx UCX_TLS=$tls timeout "$run_timeout" taskset -c "$core0,$core1" \
        "$weftrun" -n 2 "$@" -p -c "$csv" >"$log" 2>&1 || rc=$?
    if [ $rc != 0 ] || [ ! -s "$csv" ]; then
        echo "  weftrun -n 2 $* failed (rc $rc); log:" >&2
        sed 's/^/    /' "$log" | tail -n 20 >&2
        return 1
    fi
    if ! grep -q "fabric ucx" "$log"; then
        echo "  warning: $(basename "$1") did not report fabric ucx:" >&2
        grep -m1 "fabric" "$log" | sed 's/^/    /' >&2
    fi
}

# csv_col FILE KEYCOL KEY COL: column COL of the data row whose column KEYCOL equals KEY.
csv_col() { awk -F, -v k="$2" -v key="$3" -v c="$4" 'NR > 1 && $k == key { v = $c } END { if (v != "") print v }' "$1"; }

median() {
    [ $# -gt 0 ] || return 0
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.10g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.3f\n", a / b }'; }

echo "# weft vs ucx_perftest: UCX_TLS=$tls, cores $core0,$core1, $reps repetition(s), medians"
echo "# $(ucx_info -v 2>/dev/null | head -n1 | sed 's/^# *//') ; build dir $build"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (other load skews both sides)"
ucx_lat=() ucx_mr=() weft_lat=() weft_mr=()
failed=0
for rep in $(seq 1 "$reps"); do
    echo "## repetition $rep/$reps"
    if run_ucx tag_lat "$ucx_lat_iters" "$logs/ucx_lat.$rep"; then
        v=$(parse_ucx "$logs/ucx_lat.$rep" overall_lat)
        if [ -n "$v" ]; then ucx_lat+=("$v"); echo "  ucx_perftest tag_lat 8 B: $v us one-way"
        else echo "  cannot parse ucx_perftest tag_lat output:" >&2; tail -n 5 "$logs/ucx_lat.$rep" >&2; failed=1; fi
    else failed=1; fi
    if run_ucx tag_bw "$ucx_bw_iters" "$logs/ucx_bw.$rep"; then
        v=$(parse_ucx "$logs/ucx_bw.$rep" overall_mr)
        if [ -n "$v" ]; then ucx_mr+=("$v"); echo "  ucx_perftest tag_bw  8 B: $v msg/s"
        else echo "  cannot parse ucx_perftest tag_bw output:" >&2; tail -n 5 "$logs/ucx_bw.$rep" >&2; failed=1; fi
    else failed=1; fi
    [ $ucx_only = 1 ] && continue
    if run_weft "$logs/weft_lat.$rep" "$logs/weft_lat.$rep.csv" "$pingpong" -m 8 -M 8 \
        -i "$lat_iters" -w $((lat_iters / 10 + 1)); then
        v=$(csv_col "$logs/weft_lat.$rep.csv" 1 8 3)
        if [ -n "$v" ]; then weft_lat+=("$v"); echo "  weft-pingpong        8 B: $v us one-way"
        else echo "  no 8-byte row in weft-pingpong CSV" >&2; failed=1; fi
    else failed=1; fi
    if run_weft "$logs/weft_mr.$rep" "$logs/weft_mr.$rep.csv" "$msgrate" -s 8 -W 64 \
        -i "$mr_iters" -w $((mr_iters / 100 + 1)); then
        v=$(csv_col "$logs/weft_mr.$rep.csv" 1 8 8)
        if [ -n "$v" ]; then weft_mr+=("$v"); echo "  weft-msgrate         8 B: $v msg/s"
        else echo "  no result row in weft-msgrate CSV" >&2; failed=1; fi
    else failed=1; fi
done

m_ucx_lat=$(median ${ucx_lat[@]+"${ucx_lat[@]}"})
m_ucx_mr=$(median ${ucx_mr[@]+"${ucx_mr[@]}"})
m_weft_lat=$(median ${weft_lat[@]+"${weft_lat[@]}"})
m_weft_mr=$(median ${weft_mr[@]+"${weft_mr[@]}"})
r_lat=$(ratio "$m_weft_lat" "$m_ucx_lat")
r_mr=$(ratio "$m_weft_mr" "$m_ucx_mr")

echo
echo "# Summary (median of $reps; UCX_TLS=$tls; cores $core0,$core1)"
printf '%-34s %14s %14s %12s\n' "metric (8-byte messages)" "ucx_perftest" "weft" "weft/ucx"
printf '%-34s %14s %14s %12s\n' "one-way latency (us)" "${m_ucx_lat:-n/a}" "${m_weft_lat:-n/a}" "$r_lat"
printf '%-34s %14s %14s %12s\n' "message rate (msg/s)" "${m_ucx_mr:-n/a}" "${m_weft_mr:-n/a}" "$r_mr"
echo "# latency ratio > 1: Weft slower; message-rate ratio < 1: Weft slower"
# This kind of VM drifts between a fast and a slow phase lasting several runs, which medians of
# each side taken separately can mix up; a repetition's own pair of runs (back to back) is
# usually in one phase, so the median of per-repetition ratios is the steadier comparison.
pair_ratios() {  # pair_ratios "a1 a2 .." "b1 b2 ..": median of ai/bi
    awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); m = split(b, y, " "); k = 0
        for (i = 1; i <= n && i <= m; i++) if (y[i] + 0 != 0) r[++k] = x[i] / y[i]
        if (k == 0) { print "n/a"; exit }
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
        printf "%.3f\n", (k % 2) ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2 }'
}
echo "# median of per-repetition ratios: latency $(pair_ratios "${weft_lat[*]-}" "${ucx_lat[*]-}"), message rate $(pair_ratios "${weft_mr[*]-}" "${ucx_mr[*]-}")"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# samples: ucx_lat=[${ucx_lat[*]-}] weft_lat=[${weft_lat[*]-}] ucx_mr=[${ucx_mr[*]-}] weft_mr=[${weft_mr[*]-}]"

if [ -n "$csv_out" ]; then
    {
        echo "metric,ucx_perftest,weft,weft_over_ucx,reps,ucx_tls"
        echo "latency_8B_us,${m_ucx_lat},${m_weft_lat},${r_lat},$reps,\"$tls\""
        echo "msgrate_8B_msg_per_s,${m_ucx_mr},${m_weft_mr},${r_mr},$reps,\"$tls\""
    } >"$csv_out" || failed=1
fi

if [ $sweep = 1 ] && [ $ucx_only = 0 ]; then
    echo
    echo "# weft-pingpong sweep (one run)"
    if run_weft "$logs/weft_sweep" "$logs/weft_sweep.csv" "$pingpong" -i $((lat_iters / 10 + 1)) \
        -w $((lat_iters / 100 + 1)); then
        cat "$logs/weft_sweep"
    else failed=1; fi
fi
exit $failed
