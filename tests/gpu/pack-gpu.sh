#!/usr/bin/env bash
# pack-gpu.sh BUILD OUTDIR: packs a GPU test build for a machine that has a GPU but not the
# build's dependencies (no libucx, libpmix, GoogleTest or compiler there).
#
# BUILD is a configured and built tree (tests/gpu/run-gpu.sh's configure step, built with
# `cmake --build BUILD --target weft-gpu-tests weft-enqueue-lat` and tests/hostq).  OUTDIR gets
#   OUTDIR/build   BUILD without its object files, debug info stripped (ctest files included:
#                  they hold BUILD's absolute path, so run-gpu.sh --prebuilt links BUILD there)
#   OUTDIR/deps    every shared library the programs and plugins load that is neither glibc's
#                  nor the CUDA driver's, with UCX's transport modules in deps/ucx
#   OUTDIR/origin  BUILD's absolute path
# (CMake's GoogleTestAddTests.cmake travels in OUTDIR/build: ctest includes it by path.)
# Then, on the GPU machine: tests/gpu/run-gpu.sh --prebuilt OUTDIR
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: pack-gpu.sh BUILD OUTDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$2
[ -x "$build/bin/weftrun" ] || { echo "pack-gpu.sh: $build/bin/weftrun not found: build first" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/build" "$out/deps"

# The tree without objects or CMake's internals; ctest needs only the CTestTestfile.cmake files.
tar -C "$build" -c --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' . | tar -C "$out/build" -x
is_elf() { [ "$(head -c 4 "$1" | tr -d '\177')" = ELF ]; }
while IFS= read -r f; do
    is_elf "$f" && strip --strip-debug "$f"
done < <(find "$out/build" -type f \( -perm -u+x -o -name '*.so*' \))
echo "$build" >"$out/origin"
# gtest_discover_tests' ctest files include this CMake module by its absolute path, which the
# other machine's CMake may not have: ship it and point them at the copy.
gtest_module=$(grep -rhoE '/[^"]*/GoogleTestAddTests\.cmake' "$out/build" --include='*_include.cmake' | head -1)
if [ -n "$gtest_module" ]; then
    cp "$gtest_module" "$out/build/GoogleTestAddTests.cmake"
    find "$out/build" -name '*_include.cmake' -exec sed -i "s|$gtest_module|$build/GoogleTestAddTests.cmake|" {} +
fi

# Dependencies: ldd of every ELF file, less glibc and the driver (the GPU machine has its own).
skip='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64|libcuda|libweft.*|libhostq)\.so'
while IFS= read -r f; do
    is_elf "$f" && ldd "$f" 2>/dev/null
done < <(find "$build/bin" "$build/lib" -type f) |
    awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | while read -r lib; do
        base=$(basename "$lib")
        [[ "$base" =~ $skip ]] && continue
        cp -L "$lib" "$out/deps/$base"
    done
# UCX loads its transports from <libucs's folder>/ucx.
ucs=$(ldconfig -p | awk '/libucs\.so\.0 / { print $NF; exit }')
if [ -n "$ucs" ] && [ -d "$(dirname "$ucs")/ucx" ]; then
    mkdir -p "$out/deps/ucx"
    cp -L "$(dirname "$ucs")"/ucx/*.so.0 "$out/deps/ucx/"
fi
echo "pack-gpu.sh: $(du -sh "$out" | cut -f1) in $out ($(ls "$out/deps" | wc -l) dependency entries)"
