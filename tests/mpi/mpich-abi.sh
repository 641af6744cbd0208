#!/usr/bin/env bash
# mpich-abi.sh WEFTRUN WEFT_MPI_LIBDIR SRCDIR WORKDIR [SANITIZERS]
#
# The MPICH ABI: programs built by Debian's mpicc.mpich (linked against libmpich.so.12) run on
# MPICH under mpiexec.mpich, then the same binaries on Weft by library path alone
# (LD_LIBRARY_PATH=WEFT_MPI_LIBDIR, which holds libmpich.so.12 -> libweft-mpi), under weftrun and
# under mpiexec.mpich (Weft bootstraps from PMI_FD), with LD_BIND_NOW=1 so that every function
# the program names must exist in Weft.  A program calling a function Weft does not define fails
# to load, naming it.  Exit 77 (skip) without mpicc.mpich / mpiexec.mpich (Debian package mpich),
# and in a sanitized build (an uninstrumented MPICH binary cannot load an ASan/TSan library).
set -u
weftrun=$1 libdir=$2 src=$3 work=$4 sanitize=${5:-}
[ -z "$sanitize" ] || { echo "mpich-abi: SKIP: libweft-mpi is built with -fsanitize=$sanitize"; exit 77; }
for tool in mpicc.mpich mpiexec.mpich; do
  command -v $tool >/dev/null || { echo "mpich-abi: SKIP: $tool not installed (Debian package: mpich)"; exit 77; }
done
mkdir -p "$work"
for v in $(compgen -e); do
  case $v in PMI_* | PMIX_* | OMPI_* | HYDRA_* | MPIR_*) unset "$v" ;; esac
done
fail() { echo "mpich-abi: FAIL: $*"; exit 1; }
run() { # run LABEL EXPECT command...: the output must hold EXPECT and "OK"
  local label=$1 expect=$2 out
  shift 2
  out=$(timeout -k 5 60 "$@" </dev/null 2>&1)
  local rc=$?
  echo "$out" | sed "s/^/  [$label] /" | grep -v 'MPICH \(CC\|CXX\|F77\|FC\|configure\)' | head -20
  [ $rc = 0 ] || fail "$label: exit $rc"
  grep -q -- "$expect" <<<"$out" || fail "$label: no '$expect' in the output"
  grep -q ': OK' <<<"$out" || fail "$label: the program did not report OK"
}
mpiexec=(mpiexec.mpich -launcher fork -bind-to none -n 2)
for prog in p2p coll objects topo; do
  bin=$work/mpich_$prog
  mpicc.mpich -O2 -Wno-stringop-overflow -o "$bin" "$src/mpi_$prog.c" || fail "mpicc.mpich mpi_$prog.c"
  readelf -d "$bin" | grep -q 'NEEDED.*libmpich.so.12' || fail "$bin does not need libmpich.so.12"
  run "$prog on MPICH" "MPICH Version" "${mpiexec[@]}" "$bin"
  run "$prog on Weft, weftrun" "bootstrap=weftrun" env LD_LIBRARY_PATH="$libdir" LD_BIND_NOW=1 "$weftrun" -n 2 "$bin"
  run "$prog on Weft, mpiexec.mpich" "bootstrap=pmi1" env LD_LIBRARY_PATH="$libdir" LD_BIND_NOW=1 "${mpiexec[@]}" "$bin"
done
# The library the binary loads on Weft is Weft's.
LD_LIBRARY_PATH="$libdir" ldd "$work/mpich_p2p" | grep -q "libmpich.so.12 => $libdir/libmpich.so.12" ||
  fail "LD_LIBRARY_PATH=$libdir does not give Weft's libmpich.so.12: $(LD_LIBRARY_PATH="$libdir" ldd "$work/mpich_p2p" | grep mpich)"
# A function Weft does not define: the load fails and names it.
mpicc.mpich -o "$work/mpich_missing" "$src/mpi_missing.c" || fail "mpicc.mpich mpi_missing.c"
out=$(LD_LIBRARY_PATH="$libdir" LD_BIND_NOW=1 "$work/mpich_missing" 2>&1)
rc=$?
echo "  [missing] exit $rc: $out"
[ $rc != 0 ] && grep -qE 'undefined symbol: MPI_Win_(create|free)' <<<"$out" ||
  fail "a binary calling MPI_Win_create loaded on Weft (expected: undefined symbol: MPI_Win_create or MPI_Win_free)"
echo "mpich-abi: PASS: 4 programs built by mpicc.mpich ran on MPICH and, unchanged, on Weft (weftrun and mpiexec.mpich); a missing function fails at load, named"
