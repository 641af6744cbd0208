#!/usr/bin/env bash
# install-plugins.sh BUILD_DIR WORK_DIR [SANITIZERS]
# A plugin vendor's path: install Weft into a scratch prefix, build the two plugin skeletons
# from the installed sources against the installed package (CMake weft::plugin_api; the fabric
# one also through pkg-config weft-plugin), then check both with the installed conformance kit
# and run a program on the skeleton fabric through the installed weftrun.
set -euo pipefail
build=$1 work=$2
source "$(dirname "$0")/scratch_install.sh"
scratch_install "$build" "$work" "${3:-}"
skeletons=$prefix/share/weft/examples/plugin-skeleton
unset WEFT_PLUGIN_PATH WEFT_FABRIC

for kind in fabric queue; do
    cmake -S "$skeletons/$kind" -B "$work/$kind" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >"$work/$kind-configure.log"
    cmake --build "$work/$kind" -j2 >"$work/$kind-build.log"
done
ls "$work/fabric/libweft-minitcp.so" "$work/queue/libweft-queue-hostq.so" >/dev/null

# pkg-config: the header alone is enough to build a plugin.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
mkdir -p "$work/pc"
cc -std=c11 -shared -fPIC $flags -o "$work/pc/libweft-minitcp.so" "$skeletons"/fabric/*.c \
    $(pkg-config --cflags weft-plugin)
[ -z "$(pkg-config --libs weft-plugin)" ] || { echo "weft-plugin.pc must not link anything"; exit 1; }

# The installed kit, finding each plugin by name through WEFT_PLUGIN_PATH.
WEFT_PLUGIN_PATH="$work/fabric" "$prefix/bin/weft-conformance" --fabric minitcp
WEFT_PLUGIN_PATH="$work/pc" "$prefix/bin/weft-conformance" --fabric minitcp --no-multiprocess
WEFT_PLUGIN_PATH="$work/queue" "$prefix/bin/weft-conformance" --queue hostq

# A program selects the out-of-tree fabric like any other; weft-info lists it.
WEFT_PLUGIN_PATH="$work/fabric" "$prefix/bin/weft-info" | grep -q "$work/fabric/libweft-minitcp.so" || {
    echo "weft-info does not list the skeleton plugin"; WEFT_PLUGIN_PATH="$work/fabric" "$prefix/bin/weft-info"; exit 1; }
WEFT_PLUGIN_PATH="$work/fabric" WEFT_FABRIC=minitcp "$prefix/bin/weftrun" -n 3 "$prefix/bin/weft-jacobi" 48 20
echo "install.plugins: OK"
