#!/usr/bin/env bash
# weft-am on the galapagos fabric against the same run on UCX over TCP: two ranks on this node,
# and (as root) two ranks in two network namespaces joined by a veth pair
# (tests/galapagos/netns.sh).  Each configuration runs -r times, interleaved; the table gives
# the median of the runs' median round trips per kind and size.
#
#   bench/galapagos-am.sh [-r REPS] [-k KINDS] [-M MAX] [--cores A,B] [--node-only]
#                         [--samples FILE] [--args 'WEFT-AM OPTIONS'] [BUILD_DIR]
#
# --node-only leaves out the network namespaces; --samples writes every run's rows as CSV
# (config,rep,kind,bytes,latency_us_median,latency_us_p99,throughput_gbps,msgs_per_s);
# --args passes more options to weft-am (e.g. '-i 100 -n 100' for a short run).
#
# A benchmark, not a test: it prints numbers and judges nothing.
set -u -o pipefail
reps=3 kinds=short,long max=4K cores=0,1 build= node_only=0 samples_out= am_args=
while [ $# -gt 0 ]; do
    case $1 in
    -r) reps=$2; shift 2 ;;
    -k) kinds=$2; shift 2 ;;
    -M) max=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --node-only) node_only=1; shift ;;
    --samples) samples_out=$2; shift 2 ;;
    --args) am_args=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
build=${build:-./build}
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../tests/galapagos/netns.sh
[ -x "$netns" ] || netns=
am=$build/bin/weft-am weftrun=$build/bin/weftrun
[ -x "$am" ] && [ -x "$weftrun" ] || { echo "$0: $am or $weftrun missing (build first)" >&2; exit 1; }
logs=$(mktemp -d "${TMPDIR:-/tmp}/weft-gal-am.XXXXXX")
trap 'rm -rf "$logs"' EXIT

configs=("galapagos node" "ucx-tcp node")
if [ -n "$netns" ] && [ "$(id -u)" = 0 ] && [ $node_only = 0 ]; then configs+=("galapagos netns" "ucx-tcp netns"); fi

run() { # run FABRIC WHERE OUT
    local fabric=$1 where=$2 out=$3
    local -a env=(WEFT_FABRIC=galapagos)
    [ "$fabric" = ucx-tcp ] && env=(WEFT_FABRIC=ucx UCX_TLS=tcp,self)
    local -a extra=()
    read -r -a extra <<<"$am_args"
    if [ "$where" = node ]; then
        env "${env[@]}" taskset -c "$cores" timeout 300 "$weftrun" -n 2 "$am" -p -k "$kinds" -M "$max" ${extra[@]+"${extra[@]}"} >"$out" 2>&1
    else
        env "${env[@]}" taskset -c "$cores" timeout 300 "$netns" "$weftrun" "$am" -p -k "$kinds" -M "$max" ${extra[@]+"${extra[@]}"} >"$out" 2>&1
    fi
}

failed=0
for rep in $(seq 1 "$reps"); do
    for c in "${configs[@]}"; do
        set -- $c
        run "$1" "$2" "$logs/$1.$2.$rep" || { echo "# $c run $rep failed: $(tail -n 3 "$logs/$1.$2.$rep" | tr '\n' ' ')" >&2; failed=1; }
    done
done
if [ -n "$samples_out" ]; then
    {
        echo "config,rep,kind,bytes,latency_us_median,latency_us_p99,throughput_gbps,msgs_per_s"
        for rep in $(seq 1 "$reps"); do
            for c in "${configs[@]}"; do
                grep -h '^[a-z_]*,[0-9]' "$logs/${c// /.}.$rep" 2>/dev/null | sed "s/^/${c// /-},$rep,/"
            done
        done
    } >"$samples_out" || failed=1
fi

echo "# weft-am round trip (message + automatic reply), median over $reps runs of each run's median, us"
echo "# cores $cores; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
printf '%-8s %8s' kind bytes
for c in "${configs[@]}"; do printf ' %16s' "${c// /-}"; done
echo
first=${configs[0]// /.}
grep -h '^[a-z_]*,[0-9]' "$logs/$first.1" | cut -d, -f1,2 | while IFS=, read -r kind bytes; do
    printf '%-8s %8s' "$kind" "$bytes"
    for c in "${configs[@]}"; do
        f=${c// /.}
        v=$(cat "$logs/$f".* 2>/dev/null | awk -F, -v k="$kind" -v b="$bytes" '$1 == k && $2 == b { print $3 }' |
            sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "n/a" }')
        printf ' %16s' "$v"
    done
    echo
done
exit $failed
