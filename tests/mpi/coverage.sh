#!/usr/bin/env bash
# coverage.sh WEFT_INFO SRC_DIR: every function of the MPI front end (weft-info --mpi, the one
# list libweft-mpi is built from) is called by some program in tests/mpi.  A function added to
# the list without a test fails here.
set -u
info=$1 src=$2
funcs=$("$info" --mpi | grep -E '^MPIX?_[A-Za-z0-9_]+$') || { echo "coverage: weft-info --mpi failed"; exit 1; }
missing=0 total=0
for f in $funcs; do
  total=$((total + 1))
  grep -qw "$f" "$src"/*.c || { echo "coverage: no test calls $f"; missing=$((missing + 1)); }
done
[ "$total" -gt 0 ] || { echo "coverage: weft-info --mpi listed no function"; exit 1; }
[ $missing = 0 ] || { echo "coverage: $missing of $total functions untested"; exit 1; }
echo "coverage: all $total functions are called by tests/mpi"
