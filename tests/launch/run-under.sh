#!/usr/bin/env bash
# run-under.sh LAUNCHER N PROGRAM [ARGS...]
#
# Runs PROGRAM as an N-process job under a third-party launcher and checks that it bootstrapped
# through the launcher's interface: the output must hold "bootstrap=<expected>" (weft-hello
# prints it on rank 0) once per job step, and no "bootstrap=<other>". WEFT_EXPECT_BOOTSTRAP is
# exported to the program with the expected name.
#
#   mpirun-openmpi  mpirun.openmpi --allow-run-as-root --oversubscribe -n N     (PMIx, pmix)
#   mpiexec-mpich   mpiexec.mpich -launcher fork -bind-to none -n N            (PMI_FD, pmi1)
#   slurm           a private single-node cluster (slurm-cluster.sh) in a temp dir; one
#                   salloc -N1 -n N running the steps srun --mpi=pmix -n S for S in
#                   WEFT_SLURM_STEPS (default "N 1"); the cluster is stopped on any exit. (pmix)
#   slurm-pmi2      the same with srun --mpi=pmi2: PMI_FD, whose server also speaks PMI-1. (pmi1)
#
# Exit: 0 pass, 1 fail, 2 usage, 77 skip (launcher missing, or the Slurm cluster cannot start
# here; the reason and daemon log tails are printed). WEFT_REQUIRE_LAUNCHERS=1 turns skips into
# failures (for CI machines where every launcher is installed).
# Other knobs: WEFT_LAUNCH_TIMEOUT (s per launcher command, default 90), WEFT_MPIRUN_ARGS,
# WEFT_MPIEXEC_ARGS, WEFT_SRUN_ARGS (extra words), WEFT_SLURM_KEEP=1 (keep the cluster dir).
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -ge 3 ] || { echo "usage: $0 mpirun-openmpi|mpiexec-mpich|slurm|slurm-pmi2 N PROGRAM [ARGS...]" >&2; exit 2; }
launcher=$1 np=$2
shift 2
case $np in '' | *[!0-9]* | 0) echo "run-under: bad process count '$np'" >&2; exit 2 ;; esac
prog=$1
shift
case $prog in */*) ;; *) prog=$(command -v "$prog" || echo "$prog") ;; esac
[ -x "$prog" ] || { echo "run-under: FAIL: program '$prog' not found or not executable" >&2; exit 1; }

skip() {
  echo "run-under: SKIP: $*"
  if [ "${WEFT_REQUIRE_LAUNCHERS:-0}" = 1 ]; then
    echo "run-under: FAIL: WEFT_REQUIRE_LAUNCHERS=1 forbids skipping"
    exit 1
  fi
  exit 77
}
need() { command -v "$1" >/dev/null || skip "$1 not installed (Debian package: $2)"; }

# A job must see only the launcher it is started by: drop what an outer launcher (a CI job run
# under srun or mpirun, say) left in the environment.
for v in $(compgen -e); do
  case $v in
    OMPI_MCA_*) ;;  # user settings for mpirun stay
    PMI_* | PMIX_* | SLURM_* | SLURMD_* | OMPI_* | HYDRA_* | MPIR_* | PRTE_*) unset "$v" ;;
  esac
done

tmo=${WEFT_LAUNCH_TIMEOUT:-90}
out=$(mktemp "${TMPDIR:-/tmp}/weft-launch.XXXXXX") || exit 1
cluster=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  rm -f "$out"
  if [ -n "$cluster" ]; then
    "$here/slurm-cluster.sh" stop "$cluster" || true
    if [ "${WEFT_SLURM_KEEP:-0}" = 1 ]; then echo "run-under: kept $cluster"; else rm -rf "$cluster"; fi
  fi
}
trap cleanup EXIT
trap 'echo "run-under: interrupted" >&2; exit 1' INT TERM HUP

steps=1
case $launcher in
  mpirun-openmpi)
    need mpirun.openmpi openmpi-bin
    export WEFT_EXPECT_BOOTSTRAP=pmix
    # Only Open MPI's launcher and PMIx server are used (the program is not an MPI program), so no
    # BTL/PML settings are needed; --oversubscribe lets N exceed the core count.
    read -ra extra <<<"${WEFT_MPIRUN_ARGS:-}"
    cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" "${extra[@]}" "$prog" "$@")
    ;;
  mpiexec-mpich)
    need mpiexec.mpich mpich
    export WEFT_EXPECT_BOOTSTRAP=pmi1
    # fork: never try ssh even when the host name looks remote; no binding on shared CI cores.
    read -ra extra <<<"${WEFT_MPIEXEC_ARGS:-}"
    cmd=(mpiexec.mpich -launcher fork -bind-to none -n "$np" "${extra[@]}" "$prog" "$@")
    ;;
  slurm | slurm-pmi2)
    if [ "$launcher" = slurm ]; then mpi=pmix expect=pmix; else mpi=pmi2 expect=pmi1; fi
    for b in slurmctld slurmd srun salloc sinfo munged; do
      need "$b" "slurmctld slurmd slurm-client munge"
    done
    [ "$(id -u)" = 0 ] || skip "a private Slurm cluster needs root (SlurmUser=root); running as $(id -un)"
    export WEFT_EXPECT_BOOTSTRAP=$expect
    # A run killed outright (SIGKILL, e.g. by ctest on TIMEOUT) cannot stop its cluster; stop
    # those whose owner is gone before starting ours.
    for d in "${TMPDIR:-/tmp}"/weft-slurm.*; do
      [ -f "$d/owner" ] || continue
      o=$(cat "$d/owner" 2>/dev/null)
      case $o in '' | *[!0-9]*) continue ;; esac
      [ -d "/proc/$o" ] && continue
      echo "run-under: stopping the stale cluster $d (owner $o gone)"
      "$here/slurm-cluster.sh" stop "$d" && rm -rf "$d"
    done
    cluster=$(mktemp -d "${TMPDIR:-/tmp}/weft-slurm.XXXXXX") || exit 1
    echo $$ >"$cluster/owner"
    t0=$(date +%s.%N)
    "$here/slurm-cluster.sh" start "$cluster" >/dev/null
    rc=$?
    [ $rc = 0 ] || skip "the private Slurm cluster did not start here (slurm-cluster.sh exit $rc; see above)"
    echo "run-under: slurm cluster up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s ($cluster)"
    export SLURM_CONF=$cluster/etc/slurm.conf
    srun --mpi=list 2>&1 | grep -qw "$mpi" || skip "srun --mpi=list does not list $mpi (Debian package: slurm-wlm-basic-plugins)"
    slurm_steps=${WEFT_SLURM_STEPS:-$np 1}
    steps=0
    for s in $slurm_steps; do
      case $s in '' | *[!0-9]* | 0) echo "run-under: bad step size '$s'" >&2; exit 2 ;; esac
      [ "$s" -le "$np" ] || { echo "run-under: step of $s tasks exceeds the allocation of $np" >&2; exit 2; }
      steps=$((steps + 1))
    done
    # One allocation; each step is its own PMIx namespace. A failing step ends the script.
    # shellcheck disable=SC2016 # expanded by the bash that salloc runs
    steps_script='
      set -u
      mpi=$1 steps=$2; shift 2
      for s in $steps; do
        echo "run-under: step: srun --mpi=$mpi -N1 -n $s ${WEFT_SRUN_ARGS:-} $*"
        srun --mpi="$mpi" -N1 -n "$s" --kill-on-bad-exit=1 ${WEFT_SRUN_ARGS:-} "$@" || {
          rc=$?; echo "run-under: step of $s tasks failed (exit $rc)"; exit $rc; }
      done'
    cmd=(salloc -N1 -n "$np" --immediate=30 --time=5 -J weft-launch
         bash -c "$steps_script" steps "$mpi" "$slurm_steps" "$prog" "$@")
    ;;
  *)
    echo "run-under: unknown launcher '$launcher' (mpirun-openmpi, mpiexec-mpich, slurm, slurm-pmi2)" >&2
    exit 2
    ;;
esac

if [ -n "$cluster" ]; then
  echo "run-under: WEFT_EXPECT_BOOTSTRAP=$WEFT_EXPECT_BOOTSTRAP; salloc -N1 -n $np, steps: srun --mpi=$mpi -n S for S in $slurm_steps: $prog $*"
else
  echo "run-under: WEFT_EXPECT_BOOTSTRAP=$WEFT_EXPECT_BOOTSTRAP; ${cmd[*]}"
fi
t0=$(date +%s.%N)
timeout -k 5 "$tmo" "${cmd[@]}" </dev/null 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo "run-under: $launcher exit $rc after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  echo "run-under: FAIL: timed out after ${tmo}s"
  exit 1
fi
[ "$rc" = 0 ] || { echo "run-under: FAIL: $launcher exited $rc"; exit 1; }

# Whole-word bootstrap=<name>, any name, then the expected one.
pat='(^|[^[:alnum:]_])bootstrap=[[:alnum:]_-]+'
found=$(grep -oE "$pat" "$out" | sed 's/.*bootstrap=//' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
good=$(grep -oE "$pat" "$out" | sed 's/.*bootstrap=//' | grep -cx "$WEFT_EXPECT_BOOTSTRAP")
other=$(grep -oE "$pat" "$out" | sed 's/.*bootstrap=//' | grep -vcx "$WEFT_EXPECT_BOOTSTRAP")
if [ "$good" -lt "$steps" ] || [ "$other" -gt 0 ]; then
  echo "run-under: FAIL: expected 'bootstrap=$WEFT_EXPECT_BOOTSTRAP' from each of $steps job(s), no other; found: ${found:-nothing}"
  exit 1
fi
# weft-hello also prints "<name>: K processes" on rank 0: then each job must have had its size.
sizes=$(grep -oE ': [0-9]+ processes' "$out" | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
sizes=${sizes% }
if [ -n "$sizes" ]; then
  want=$(if [ -n "$cluster" ]; then printf '%s\n' $slurm_steps; else echo "$np"; fi | sort -n | tr '\n' ' ')
  want=${want% }
  [ "$sizes" = "$want" ] || {
    echo "run-under: FAIL: job sizes reported: ${sizes}; expected: $want"
    exit 1
  }
fi
echo "run-under: PASS: $good x bootstrap=$WEFT_EXPECT_BOOTSTRAP under $launcher${sizes:+, sizes $sizes}"
exit 0
