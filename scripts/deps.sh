#!/usr/bin/env bash
# Installs the Debian packages Weft needs to build and test (as root; a no-op when all are there).
set -euo pipefail
packages=(
  cmake g++ make pkg-config git             # toolchain
  libgtest-dev libbenchmark-dev             # tests; Google Benchmark for bench/ (weft-bench-persistent)
  clang libclang-rt-14-dev                  # libFuzzer targets (tests/fuzz, scripts/fuzz.sh)
  clang-format                              # scripts/check-format.sh (.clang-format)
  libucx-dev ucx-utils                      # UCX fabric plugin, ucx_perftest for bench/compare-ucx.sh
  libfabric-dev libfabric-bin               # libfabric fabric plugin, fi_info
  libpmix-dev                               # PMIx bootstrap (Open MPI mpirun, Slurm srun --mpi=pmix)
  nlohmann-json3-dev iproute2               # Galapagos plugin (cluster files); ip netns for its tests
  libsodium-dev                             # Galapagos handshake (HMAC-SHA-256)
  libamdhip64-dev libze-dev                 # HIP and SYCL/Level Zero queue plugins (CUDA: /usr/local/cuda)
  mpich openmpi-bin                         # launchers the tests bootstrap under
  libmpich-dev libopenmpi-dev               # mpi.h for bench/mpich-coll and bench/ompi-coll
  slurmctld slurmd slurm-client munge       # the single-node Slurm cluster of tests/launch
  procps                                    # pgrep in weftrun's job-control tests (tests/bootstrap)
  python3-matplotlib                        # bench/report.sh: the plots of docs/performance.md
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "weft: missing Debian packages: ${missing[*]}; run this script as root (or apt-get install them)" >&2
  exit 1
fi
echo "weft: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
