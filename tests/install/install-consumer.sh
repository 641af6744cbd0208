#!/usr/bin/env bash
# install-consumer.sh BUILD_DIR WORK_DIR EXAMPLES_DIR [SANITIZERS]
set -euo pipefail
build=$1 work=$2 examples=$3
source "$(dirname "$0")/scratch_install.sh"
scratch_install "$build" "$work" "${4:-}"

# 1. CMake package: find_package(weft) -> weft::weft
cmake -S "$examples/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >"$work/configure.log"
cmake --build "$work/cmake" -j2 >"$work/build.log"

# 2. pkg-config: weft.pc
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=c11 $flags -o "$work/hello-pc" "$examples/hello.c" $(pkg-config --cflags --libs weft) -Wl,-rpath,"$prefix/lib"

# The installed programs find their plugins in <prefix>/lib/weft, not in the build tree.
unset WEFT_PLUGIN_PATH
"$prefix/bin/weft-info" | grep -q "path:     $prefix/lib/weft/libweft-" || {
    echo "weft-info does not list plugins from $prefix/lib/weft"; "$prefix/bin/weft-info"; exit 1; }
# Run through PATH from another folder, weft-info still finds the plugins beside the libweft it
# runs with, and never searches relative to the working directory: a lib/weft planted beside
# that folder (as anyone may make under /tmp) is not searched.
mkdir -p "$work/elsewhere/cwd" "$work/elsewhere/lib/weft"
planted=$(ls "$prefix"/lib/weft/libweft-*.so | head -n 1)
cp "$planted" "$work/elsewhere/lib/weft/libweft-planted.so"
(cd "$work/elsewhere/cwd" && PATH="$prefix/bin:$PATH" weft-info) >"$work/info-path.txt" || true
grep -q "path:     $prefix/lib/weft/libweft-" "$work/info-path.txt" || {
    echo "weft-info through PATH from $work/elsewhere/cwd does not list plugins from $prefix/lib/weft"
    cat "$work/info-path.txt"; exit 1; }
if grep -q "planted" "$work/info-path.txt"; then
    echo "weft-info searched a directory relative to the working directory:"; cat "$work/info-path.txt"; exit 1
fi
env -u WEFT_KVS "$work/cmake/hello-installed"
"$prefix/bin/weftrun" -n 2 "$work/cmake/hello-installed"
"$prefix/bin/weftrun" -n 3 "$work/cmake/hello-cxx-installed"
"$prefix/bin/weftrun" -n 2 "$work/hello-pc"
echo "install.consumer: OK"
