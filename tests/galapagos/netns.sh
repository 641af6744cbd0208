#!/usr/bin/env bash
# Runs a 2-rank program with its ranks in two network namespaces joined by a veth pair: rank 0
# in this one (veth end 10.231.N.1), rank 1 in a new one (10.231.N.2), so every byte between
# them crosses the pair.  Needs root (ip netns); skips (exit 77) with the reason otherwise.
#   netns.sh WEFTRUN PROG [ARGS...]          (the fabric: WEFT_FABRIC, default galapagos)
# bench/galapagos-am.sh uses it with NETNS_KEEP_RUNNING=... to time weft-am across the pair.
set -u
weftrun=$1
shift
if [ "$(id -u)" != 0 ]; then echo "SKIP: creating network namespaces needs root"; exit 77; fi
command -v ip >/dev/null || { echo "SKIP: ip (iproute2) is not installed"; exit 77; }
n=$(( ($$ % 200) + 20 ))
ns=weftgal$$
va=wga$$ vb=wgb$$
cleanup() {
    ip link del "$va" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT
if ! ip netns add "$ns" 2>/dev/null; then
    echo "SKIP: cannot create a network namespace here (ip netns add failed: no CAP_SYS_ADMIN?)"
    exit 77
fi
if ! ip link add "$va" type veth peer name "$vb" 2>/dev/null; then
    echo "SKIP: cannot create a veth pair here (no veth support or no CAP_NET_ADMIN)"
    exit 77
fi
set -e
ip link set "$vb" netns "$ns"
ip addr add "10.231.$n.1/24" dev "$va"
ip link set "$va" up
ip -n "$ns" addr add "10.231.$n.2/24" dev "$vb"
ip -n "$ns" link set "$vb" up
ip -n "$ns" link set lo up
set +e
export WEFT_FABRIC=${WEFT_FABRIC:-galapagos} NETNS_NAME=$ns NETNS_NET=10.231.$n
# weftrun's key-value server listens on this side's veth address so rank 1 reaches it.
"$weftrun" --kvs-host "10.231.$n.1" -n 2 sh -c '
    if [ "$WEFT_RANK" = 1 ]; then
        exec ip netns exec "$NETNS_NAME" env WEFT_GALAPAGOS_ADDR="$NETNS_NET.2" "$@"
    fi
    WEFT_GALAPAGOS_ADDR="$NETNS_NET.1" exec "$@"' sh "$@"
