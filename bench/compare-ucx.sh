#!/usr/bin/env bash
# Compare Weft over its UCX plugin with UCX itself (ucx_perftest), on the same transport and
# the same two cores: one-way latency and message rate (8 bytes, or each size of --sizes), and
# with --ofi Weft over its libfabric plugin with libfabric's fi_pingpong (latency).
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
      --sizes LIST      message sizes, comma-separated, K/M suffixes (default 8); above 4 KiB the
                        iteration counts shrink as 4096 / (4096 + size) (at least 10)
      --ofi             also fi_pingpong (libfabric) and weft-pingpong with WEFT_FABRIC=ofi,
                        both on provider --ofi-prov (default shm): one-way latency
      --ofi-prov NAME   the libfabric provider of --ofi (default shm)
      --csv FILE        write the medians and ratios as CSV to FILE
      --samples FILE    write every sample as CSV to FILE: tool,metric,bytes,rep,value with
                        metric lat_us (one-way), msg_per_s or MBps (10^6 bytes/s)
      --timeout S       kill any single run after S seconds (default 120)
      --keep            keep the raw logs (their folder is printed)
  -h, --help            this text

Notes: latency is one-way (round trip / 2) on both sides: ucx_perftest tag_lat "overall_lat",
weft-pingpong "latency_us", fi_pingpong "usec/xfer" (time / 2 x iterations).  Message rate: ucx_perftest tag_bw "overall_mr" streams tagged sends
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
sizes=8
ofi=0
ofi_prov=shm
samples_out=
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
    --sizes) sizes=$2; shift 2 ;;
    --ofi) ofi=1; shift ;;
    --ofi-prov) ofi_prov=$2; shift 2 ;;
    --samples) samples_out=$2; shift 2 ;;
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
# to_bytes SIZE: SIZE with an optional K or M suffix (powers of 1024) as a number, or nothing.
to_bytes() {
    case $1 in
    *[kK]) is_uint "${1%?}" && echo $((${1%?} * 1024)) ;;
    *[mM]) is_uint "${1%?}" && echo $((${1%?} * 1048576)) ;;
    *) is_uint "$1" && echo "$1" ;;
    esac
}
size_list=()
IFS=, read -r -a size_words <<<"$sizes"
for w in "${size_words[@]}"; do
    b=$(to_bytes "$w")
    [ -n "$b" ] || die "--sizes: bad size '$w' (a number, optionally with K or M)"
    size_list+=("$b")
done
[ ${#size_list[@]} -gt 0 ] || die "--sizes needs at least one size"
# scaled N SIZE: N iterations at 8 bytes become fewer above 4 KiB, so that a large size does not
# take minutes: N * 4096 / (4096 + SIZE), at least 10.
scaled() {
    if [ "$2" -le 4096 ]; then echo "$1"; return; fi
    local v=$(($1 * 4096 / (4096 + $2)))
    [ $v -lt 10 ] && v=10
    echo $v
}
core0=${cores%%,*}
core1=${cores#*,}
is_uint "$core0" && is_uint "$core1" && [ "$core0" != "$core1" ] ||
    die "--cores needs two different core numbers, e.g. 0,1 (got '$cores')"

command -v ucx_perftest >/dev/null || die "ucx_perftest not found in PATH (Debian: apt-get install ucx-utils)"
[ $ofi = 0 ] || command -v fi_pingpong >/dev/null || die "--ofi: fi_pingpong not found in PATH (Debian: apt-get install libfabric-bin)"
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
# "Final:" line of the table format.  ucx_perftest pads the iteration count to 4 places, so a run
# of fewer than 1000 iterations (a large size's) prints its row with leading blanks.
parse_ucx() {
    awk -v col="$2" '
        BEGIN { n = split("iterations 50.0_percentile_lat avg_lat overall_lat avg_bw overall_bw avg_mr overall_mr", names, " ")
                for (i = 1; i <= n; i++) pos[names[i]] = i }
        /^iterations,/ { nf = split($0, h, ","); for (i = 1; i <= nf; i++) { sub(/\r$/, "", h[i]); csvpos[h[i]] = i }; next }
        /^[ \t]*[0-9][0-9.]*(,[0-9.eE+-]+)+[ \r]*$/ { csvlast = $0 }
        /^Final:/ { sub(/^Final:[ \t]*/, ""); tablelast = $0 }
        END {
            if (csvlast != "" && (col in csvpos)) { split(csvlast, f, ","); v = f[csvpos[col]] }
            else if (tablelast != "" && (col in pos)) { split(tablelast, f, " "); v = f[pos[col]] }
            gsub(/[ \r]/, "", v)
            if (v ~ /^[0-9.eE+-]+$/) print v
        }' "$1"
}

# wait_listen PORT PID: wait (<= 10 s) until some socket listens on PORT (TCP state 0A) or PID died.
wait_listen() {
    local hex i
    hex=$(printf '%04X' "$1")
    for i in $(seq 1 200); do
        awk 'NR > 1 && $4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
            grep -qi ":$hex\$" && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
}

# run_ucx TEST ITERS LOGFILE [SIZE]: server on core0 in the background, client on core1 to 127.0.0.1.
run_ucx() {
    local test=$1 iters=$2 log=$3 size=${4:-8} srvlog=$3.server warm=$(( $2 / 100 > 10000 ? 10000 : $2 / 100 + 1 ))
    next_port
    UCX_TLS=$tls timeout "$run_timeout" taskset -c "$core0" \
        ucx_perftest -t "$test" -s "$size" -n "$iters" -w "$warm" -p "$port" -v >"$srvlog" 2>&1 &
    server_pid=$!
    wait_listen "$port" "$server_pid"
    local rc=0
    UCX_TLS=$tls timeout "$run_timeout" taskset -c "$core1" \
        ucx_perftest 127.0.0.1 -t "$test" -s "$size" -n "$iters" -w "$warm" -p "$port" -v >"$log" 2>&1 || rc=$?
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    if [ $rc != 0 ]; then
        echo "  ucx_perftest -t $test failed (rc $rc); client log:" >&2
        sed 's/^/    /' "$log" | tail -n 15 >&2
        echo "  server log:" >&2; sed 's/^/    /' "$srvlog" | tail -n 15 >&2
        return 1
    fi
}

# run_fi SIZE ITERS LOGFILE: fi_pingpong server on core0, client on core1 (provider ofi_prov,
# RDM endpoints, tagged messages: what Weft's ofi plugin uses); prints usec/xfer and MB/sec.
run_fi() {
    local size=$1 iters=$2 log=$3 rc=0
    next_port
    timeout "$run_timeout" taskset -c "$core0" fi_pingpong -p "$ofi_prov" -e rdm -m tagged -B "$port" \
        -S "$size" -I "$iters" >"$log.server" 2>&1 &
    server_pid=$!
    wait_listen "$port" "$server_pid"
    timeout "$run_timeout" taskset -c "$core1" fi_pingpong -p "$ofi_prov" -e rdm -m tagged -P "$port" \
        -S "$size" -I "$iters" 127.0.0.1 >"$log" 2>&1 || rc=$?
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    # The result row (one size: one row): bytes #sent #ack total time MB/sec usec/xfer
    # Mxfers/sec, the size abbreviated (4k, 1m).
    local v
    v=$(awk '$1 != "bytes" && NF >= 8 && $7 ~ /^[0-9.]+$/ { print $7, $6 }' "$log" | tail -n 1)
    if [ $rc != 0 ] || [ -z "$v" ]; then
        echo "  fi_pingpong -S $size failed (rc $rc); client log:" >&2
        tail -n 10 "$log" | sed 's/^/    /' >&2
        return 1
    fi
    echo "$v"
}

# run_weft LOGFILE CSVFILE PROG ARGS...: both ranks under taskset core0,core1; -p in the benchmark
# pins rank r to the r-th of those cores.  WEFT_FABRIC is $weft_fabric (ucx unless set).
weft_fabric=ucx
run_weft() {
    local log=$1 csv=$2; shift 2
    local rc=0
    rm -f "$csv"
    WEFT_FABRIC=$weft_fabric WEFT_OFI_PROVIDER=$ofi_prov UCX_TLS=$tls timeout "$run_timeout" \
        taskset -c "$core0,$core1" "$weftrun" -n 2 "$@" -p -c "$csv" >"$log" 2>&1 || rc=$?
    if [ $rc != 0 ] || [ ! -s "$csv" ]; then
        echo "  weftrun -n 2 $* failed (rc $rc); log:" >&2
        sed 's/^/    /' "$log" | tail -n 20 >&2
        return 1
    fi
    if ! grep -q "fabric $weft_fabric" "$log"; then
        echo "  warning: $(basename "$1") did not report fabric $weft_fabric:" >&2
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
[ $ofi = 1 ] && echo "# libfabric $(fi_info --version 2>/dev/null | awk '/^libfabric:/ { print $2 }'), provider $ofi_prov (fi_pingpong and WEFT_FABRIC=ofi)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (other load skews both sides)"
# samples[KEY.SIZE]: the values of every repetition, KEY one of ucx_lat ucx_mr weft_lat weft_mr
# fi_lat ofi_lat; one CSV row per sample goes to --samples.
declare -A samples
[ -n "$samples_out" ] && { echo "tool,metric,bytes,rep,value" >"$samples_out" || die "cannot write $samples_out"; }
# sample KEY SIZE REP VALUE LABEL
sample() {
    samples[$1.$2]="${samples[$1.$2]-} $4"
    printf '  %-20s %8s B: %s\n' "$5" "$2" "$4"
    [ -n "$samples_out" ] || return 0
    local tool metric
    case $1 in
    ucx_lat) tool=ucx_perftest metric=lat_us ;; ucx_mr) tool=ucx_perftest metric=msg_per_s ;;
    weft_lat) tool=weft-ucx metric=lat_us ;; weft_mr) tool=weft-ucx metric=msg_per_s ;;
    fi_lat) tool=fi_pingpong metric=lat_us ;; ofi_lat) tool=weft-ofi metric=lat_us ;;
    esac
    echo "$tool,$metric,$2,$3,$4" >>"$samples_out"
    # Streaming bandwidth, 10^6 bytes/s, from the message rate (the same unit on both sides).
    [ "$metric" = msg_per_s ] && awk -v t="$tool" -v b="$2" -v r="$3" -v v="$4" \
        'BEGIN { printf "%s,MBps,%s,%s,%.4f\n", t, b, r, v * b / 1e6 }' >>"$samples_out"
    return 0
}
# weft_pingpong KEY SIZE REP LABEL: one weft-pingpong run of SIZE on $weft_fabric, as sample KEY.
weft_pingpong() {
    local key=$1 sz=$2 rep=$3 it v
    it=$(scaled "$lat_iters" "$sz")
    run_weft "$logs/$key.$sz.$rep" "$logs/$key.$sz.$rep.csv" "$pingpong" -m "$sz" -M "$sz" \
        -i "$it" -w $((it / 10 + 1)) || return 1
    v=$(csv_col "$logs/$key.$sz.$rep.csv" 1 "$sz" 3)
    [ -n "$v" ] || { echo "  no $sz-byte row in weft-pingpong ($weft_fabric) CSV" >&2; return 1; }
    sample "$key" "$sz" "$rep" "$v" "$4"
}
failed=0
for rep in $(seq 1 "$reps"); do
    echo "## repetition $rep/$reps"
    for sz in "${size_list[@]}"; do
        if run_ucx tag_lat "$(scaled "$ucx_lat_iters" "$sz")" "$logs/ucx_lat.$sz.$rep" "$sz"; then
            v=$(parse_ucx "$logs/ucx_lat.$sz.$rep" overall_lat)
            if [ -n "$v" ]; then sample ucx_lat "$sz" "$rep" "$v" "ucx_perftest tag_lat"
            else echo "  cannot parse ucx_perftest tag_lat output:" >&2; tail -n 5 "$logs/ucx_lat.$sz.$rep" >&2; failed=1; fi
        else failed=1; fi
        if run_ucx tag_bw "$(scaled "$ucx_bw_iters" "$sz")" "$logs/ucx_bw.$sz.$rep" "$sz"; then
            v=$(parse_ucx "$logs/ucx_bw.$sz.$rep" overall_mr)
            if [ -n "$v" ]; then sample ucx_mr "$sz" "$rep" "$v" "ucx_perftest tag_bw"
            else echo "  cannot parse ucx_perftest tag_bw output:" >&2; tail -n 5 "$logs/ucx_bw.$sz.$rep" >&2; failed=1; fi
        else failed=1; fi
        [ $ucx_only = 1 ] && continue
        weft_fabric=ucx
        weft_pingpong weft_lat "$sz" "$rep" "weft-pingpong" || failed=1
        it=$(scaled "$mr_iters" "$sz")
        if run_weft "$logs/weft_mr.$sz.$rep" "$logs/weft_mr.$sz.$rep.csv" "$msgrate" -s "$sz" -W 64 \
            -i "$it" -w $((it / 100 + 1)); then
            v=$(csv_col "$logs/weft_mr.$sz.$rep.csv" 1 "$sz" 8)
            if [ -n "$v" ]; then sample weft_mr "$sz" "$rep" "$v" "weft-msgrate"
            else echo "  no result row in weft-msgrate CSV" >&2; failed=1; fi
        else failed=1; fi
        [ $ofi = 1 ] || continue
        it=$(scaled "$lat_iters" "$sz")
        if v=$(run_fi "$sz" "$it" "$logs/fi_lat.$sz.$rep"); then sample fi_lat "$sz" "$rep" "${v%% *}" "fi_pingpong $ofi_prov"
        else failed=1; fi
        weft_fabric=ofi
        weft_pingpong ofi_lat "$sz" "$rep" "weft-pingpong ofi" || failed=1
        weft_fabric=ucx
    done
done

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
[ -n "$csv_out" ] && { echo "metric,ucx_perftest,weft,weft_over_ucx,reps,ucx_tls" >"$csv_out" || failed=1; }
for sz in "${size_list[@]}"; do
    # shellcheck disable=SC2086
    {
        m_ucx_lat=$(median ${samples[ucx_lat.$sz]-}); m_ucx_mr=$(median ${samples[ucx_mr.$sz]-})
        m_weft_lat=$(median ${samples[weft_lat.$sz]-}); m_weft_mr=$(median ${samples[weft_mr.$sz]-})
    }
    r_lat=$(ratio "$m_weft_lat" "$m_ucx_lat")
    r_mr=$(ratio "$m_weft_mr" "$m_ucx_mr")
    echo
    echo "# Summary (median of $reps; UCX_TLS=$tls; cores $core0,$core1)"
    printf '%-34s %14s %14s %12s\n' "metric ($sz-byte messages)" "ucx_perftest" "weft" "weft/ucx"
    printf '%-34s %14s %14s %12s\n' "one-way latency (us)" "${m_ucx_lat:-n/a}" "${m_weft_lat:-n/a}" "$r_lat"
    printf '%-34s %14s %14s %12s\n' "message rate (msg/s)" "${m_ucx_mr:-n/a}" "${m_weft_mr:-n/a}" "$r_mr"
    if [ $ofi = 1 ]; then
        # shellcheck disable=SC2086
        { m_fi=$(median ${samples[fi_lat.$sz]-}); m_ofi=$(median ${samples[ofi_lat.$sz]-}); }
        printf '%-34s %14s %14s %12s\n' "one-way latency (us), $ofi_prov" "fi_pingpong" "weft ofi" "weft/fi"
        printf '%-34s %14s %14s %12s\n' "" "${m_fi:-n/a}" "${m_ofi:-n/a}" "$(ratio "$m_ofi" "$m_fi")"
    fi
    echo "# latency ratio > 1: Weft slower; message-rate ratio < 1: Weft slower"
    echo "# median of per-repetition ratios: latency $(pair_ratios "${samples[weft_lat.$sz]-}" "${samples[ucx_lat.$sz]-}"), message rate $(pair_ratios "${samples[weft_mr.$sz]-}" "${samples[ucx_mr.$sz]-}")"
    if [ -n "$csv_out" ]; then
        {
            echo "latency_${sz}B_us,${m_ucx_lat},${m_weft_lat},${r_lat},$reps,\"$tls\""
            echo "msgrate_${sz}B_msg_per_s,${m_ucx_mr},${m_weft_mr},${r_mr},$reps,\"$tls\""
        } >>"$csv_out" || failed=1
    fi
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
for k in "${!samples[@]}"; do echo "# samples $k:${samples[$k]}"; done | sort -V

if [ $sweep = 1 ] && [ $ucx_only = 0 ]; then
    echo
    echo "# weft-pingpong sweep (one run)"
    if run_weft "$logs/weft_sweep" "$logs/weft_sweep.csv" "$pingpong" -i $((lat_iters / 10 + 1)) \
        -w $((lat_iters / 100 + 1)); then
        cat "$logs/weft_sweep"
    else failed=1; fi
fi
exit $failed
