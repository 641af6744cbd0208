#!/usr/bin/env bash
# install-mpi.sh BUILD_DIR WORK_DIR SRC_DIR [SANITIZERS]: the MPI front end as installed.  Installs the build
# into a scratch prefix, then builds tests/mpi/mpi_p2p.c three ways against it: with the
# installed weftcc, with `pkg-config weft-mpi`, and as a CMake project linking weft::mpi
# (find_package(weft)); runs each under the installed weftrun.  Also checks that mpi.h sits in
# include/weft-mpi (never include/), and that lib/weft-mpi holds libmpich.so.12 / libmpi.so.12.
set -euo pipefail
build=$1 work=$2 src=$3
source "$(dirname "$0")/../install/scratch_install.sh"
scratch_install "$build" "$work" "${4:-}"
[ -f "$prefix/include/weft-mpi/mpi.h" ] && [ ! -e "$prefix/include/mpi.h" ] || {
  echo "install-mpi: mpi.h must be in include/weft-mpi only"; exit 1; }
for n in libmpich.so.12 libmpi.so.12; do
  [ -e "$prefix/lib/weft-mpi/$n" ] || { echo "install-mpi: no lib/weft-mpi/$n"; exit 1; }
done
unset WEFT_PLUGIN_PATH
# 1. weftcc (relocatable: it finds the prefix from its own place)
"$prefix/bin/weftcc" -show -c x.c | grep -q -- "-I$(cd "$prefix" && pwd -P)/include/weft-mpi " || {
  echo "install-mpi: weftcc -show: $("$prefix/bin/weftcc" -show -c x.c)"; exit 1; }
"$prefix/bin/weftcc" -O2 $flags -o "$work/p2p-weftcc" "$src/mpi_p2p.c"
# 2. pkg-config
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -O2 $flags -o "$work/p2p-pc" "$src/mpi_p2p.c" $(pkg-config --cflags --libs weft-mpi)
# 3. CMake: weft::mpi
mkdir -p "$work/proj"
cp "$src/mpi_p2p.c" "$src/mpi_check.h" "$work/proj/"
cat >"$work/proj/CMakeLists.txt" <<'EOC'
cmake_minimum_required(VERSION 3.25)
project(uses_weft_mpi C)
find_package(weft REQUIRED)
add_executable(p2p-cmake mpi_p2p.c)
target_link_libraries(p2p-cmake PRIVATE weft::mpi)
EOC
cmake -S "$work/proj" -B "$work/proj/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$flags" >"$work/configure.log"
cmake --build "$work/proj/build" >"$work/build.log"
for p in "$work/p2p-weftcc" "$work/p2p-pc" "$work/proj/build/p2p-cmake"; do
  out=$("$prefix/bin/weftrun" -n 2 "$p" 2>&1) || { echo "$out"; echo "install-mpi: $p failed"; exit 1; }
  grep -q 'mpi_p2p: OK' <<<"$out" || { echo "$out"; exit 1; }
  lib=$(ldd "$p" | awk '/libweft-mpi.so.0 =>/ { print $3 }')
  [ -n "$lib" ] && [ "$(realpath "$(dirname "$lib")")" = "$(realpath "$prefix/lib")" ] || {
    ldd "$p"; echo "install-mpi: $p does not use $prefix/lib"; exit 1; }
done
echo "install-mpi: OK (weftcc, pkg-config weft-mpi, weft::mpi)"
