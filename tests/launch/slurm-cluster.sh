#!/usr/bin/env bash
# slurm-cluster.sh start|stop|status DIR
#
# A private single-node Slurm cluster for the launch tests: its own munged (key, socket, pid,
# log), slurmctld and slurmd, with every piece of state under DIR. Nothing from /etc/slurm or
# /etc/munge is used and no system service is touched, so it runs as root in a container with
# neither systemd nor cgroups (proctrack/linuxproc, task/none, jobacct_gather/none).
#
#   start   writes DIR/etc/slurm.conf, starts munged, slurmctld, slurmd and waits (bounded by
#           WEFT_SLURM_START_TIMEOUT, default 30 s) until sinfo shows the node idle. Prints
#           "export SLURM_CONF=..." lines on stdout (also in DIR/env). On failure it prints the
#           reason and the daemon log tails on stderr, stops what it started and exits non-zero.
#   stop    cancels the cluster's jobs and stops exactly the processes it started (pid files
#           under DIR/run, re-checked against /proc/PID/exe). Idempotent.
#   status  prints what runs; exit 0 when all three daemons run, 3 otherwise.
#
# Exit codes: 0 ok, 1 failure, 2 usage, 3 not running (status), 77 a needed binary is missing.
# Every client command must be run with SLURM_CONF=DIR/etc/slurm.conf.
set -u

usage() { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2" 2>/dev/null || { echo "slurm-cluster: cannot create $2" >&2; exit 1; }
DIR=$(cd "$2" && pwd -P) || exit 1

CONF=$DIR/etc/slurm.conf
RUN=$DIR/run
LOG=$DIR/log
MUNGE_SOCK=$DIR/munge/munge.socket
START_TIMEOUT=${WEFT_SLURM_START_TIMEOUT:-30}
export SLURM_CONF=$CONF

say() { echo "slurm-cluster: $*" >&2; }

# Daemon name -> binary; pid files are DIR/run/<name>.pid, written by us (not the daemon).
daemon_bin() {
  case $1 in
    munged) command -v munged || echo /usr/sbin/munged ;;
    slurmctld) command -v slurmctld || echo /usr/sbin/slurmctld ;;
    slurmd) command -v slurmd || echo /usr/sbin/slurmd ;;
  esac
}

# pid of a daemon we started, if it still runs and is still that binary; empty otherwise.
live_pid() {
  local f=$RUN/$1.pid pid exe want
  [ -s "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null) || return 0
  case $pid in '' | *[!0-9]*) return 0 ;; esac
  [ -d /proc/$pid ] || return 0
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exe=
  want=$(readlink -f "$(daemon_bin "$1")")
  # A zombie or an exiting process has no exe; a reused pid has a different one.
  if [ -n "$exe" ] && [ "${exe% (deleted)}" != "$want" ]; then return 0; fi
  if [ -z "$exe" ] && ! grep -q "^State:.*[RSD]" "/proc/$pid/status" 2>/dev/null; then return 0; fi
  echo "$pid"
}

stop_pid() {  # name: SIGTERM, wait up to 10 s, then SIGKILL
  local name=$1 pid
  pid=$(live_pid "$name")
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do
      [ -n "$(live_pid "$name")" ] || break
      sleep 0.1
    done
    if [ -n "$(live_pid "$name")" ]; then
      say "$name ($pid) ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null
      sleep 0.2
    fi
  fi
  rm -f "$RUN/$name.pid"
}

# slurmstepd processes of this cluster: they inherit slurmd's environment, SLURM_CONF included.
our_stepds() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$(readlink -f "$(command -v slurmstepd || echo /usr/sbin/slurmstepd)")" ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$CONF" && echo "${p#/proc/}"
  done
}

log_tails() {
  local n f
  # Each daemon runs in the foreground with stdout/stderr in <name>.out, which holds its log
  # and also what it says before it opens its log file; <name>.log is the fallback.
  for n in munged slurmctld slurmd; do
    f=$LOG/$n.out
    [ -s "$f" ] || f=$LOG/$n.log
    [ -s "$f" ] || continue
    echo "----- tail of $f -----" >&2
    tail -n 25 "$f" >&2
  done
}

do_stop() {
  local pids
  if [ -n "$(live_pid slurmctld)" ] && command -v scancel >/dev/null; then
    timeout 10 scancel --quiet --full --user=root >/dev/null 2>&1 || true
    timeout 10 scancel --quiet --user=root >/dev/null 2>&1 || true
  fi
  stop_pid slurmd
  pids=$(our_stepds)
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null
    for _ in $(seq 30); do pids=$(our_stepds); [ -n "$pids" ] || break; sleep 0.1; done
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
  fi
  stop_pid slurmctld
  stop_pid munged
  return 0
}

port_busy() {  # any TCP socket (listening or connected) on local port $1 (v4 or v6)?
  local hex
  hex=$(printf '%04X' "$1")
  if [ -r /proc/net/tcp ]; then
    awk -v h=":$hex" 'substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
  fi
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Ports below the kernel's ephemeral range: no connection made meanwhile (the test suite makes
# many, in parallel) can take the chosen port as its local port before slurmctld binds it.
free_port() {  # a port in [15000, ephemeral start) not in use and not in $* (already chosen)
  local p lo=32768 span
  read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
  span=$((lo - 15000))
  [ "$span" -gt 100 ] || span=17768
  for _ in $(seq 200); do
    p=$((15000 + (RANDOM * 32768 + RANDOM) % span))
    case " $* " in *" $p "*) continue ;; esac
    port_busy "$p" || { echo "$p"; return 0; }
  done
  return 1
}

write_conf() {
  local host=$1 ctld_port=$2 slurmd_port=$3 cpus
  cpus=$(nproc 2>/dev/null || echo 1)
  # Tests ask for up to 4 tasks; config_overrides makes slurmd register the configured count
  # instead of the real one, so a 1- or 2-core CI machine still runs -n 4 (no binding: task/none).
  [ "$cpus" -ge 4 ] || cpus=4
  : >"$DIR/etc/plugstack.conf"
  cat >"$CONF" <<EOF
# Generated by weft tests/launch/slurm-cluster.sh; all state lives under $DIR.
ClusterName=weft
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/d
TmpFS=$DIR/tmp
SlurmctldPidFile=$RUN/slurmctld.daemon.pid
SlurmdPidFile=$RUN/slurmd.daemon.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$DIR/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobContainerType=job_container/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
InactiveLimit=0
KillWait=5
MinJobAge=30
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=20
NodeName=$host NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
}

start_bg() {  # name logfile cmd...: start a foreground daemon in its own session, record its pid
  local name=$1 out=$2
  shift 2
  local pid setsid_exe
  setsid_exe=$(readlink -f "$(command -v setsid)")
  setsid "$@" </dev/null >>"$out" 2>&1 &
  pid=$!
  echo "$pid" >"$RUN/$name.pid"
  for _ in $(seq 50); do  # until setsid has exec'd the daemon (same pid)
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$setsid_exe" ] || break
    sleep 0.02
  done
}

fail() {
  say "start failed: $*"
  log_tails
  do_stop
  exit 1
}

do_start() {
  local b host p1 p2 state t0 now
  for b in munged mungekey munge unmunge slurmctld slurmd sinfo scontrol srun salloc scancel; do
    command -v "$b" >/dev/null || { say "missing $b (packages: munge slurmctld slurmd slurm-client)"; exit 77; }
  done
  if [ -n "$(live_pid munged)$(live_pid slurmctld)$(live_pid slurmd)" ]; then
    if [ -n "$(live_pid munged)" ] && [ -n "$(live_pid slurmctld)" ] && [ -n "$(live_pid slurmd)" ]; then
      say "already running in $DIR"
      cat "$DIR/env"
      return 0
    fi
    say "partly running in $DIR; restarting"
    do_stop
  fi
  t0=$(date +%s.%N)
  host=$(hostname -s 2>/dev/null || hostname)
  [ -n "$host" ] || fail "no hostname"
  # slurmctld/slurmd/srun look the short host name up; NodeAddr keeps traffic on 127.0.0.1,
  # but an unresolvable name still breaks srun's step launch.
  getent hosts "$host" >/dev/null || say "warning: '$host' does not resolve (getent hosts); srun may fail"

  rm -rf "${DIR:?}/etc" "$DIR/spool" "$DIR/tmp" "$DIR/munge" "$LOG"
  mkdir -p "$DIR/etc" "$DIR/spool/ctld" "$DIR/spool/d" "$DIR/tmp" "$DIR/munge" "$RUN" "$LOG" || fail "mkdir under $DIR"
  chmod 755 "$DIR/munge"  # munged wants the socket's directory searchable by all
  chmod 700 "$DIR/spool/ctld" "$DIR/spool/d"

  # munge: own key, socket, pid, seed and log. --force lets munged accept directories it finds
  # "insecure" (e.g. a parent that is group-writable), which is fine for a throwaway test key.
  mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none || fail "cannot create munge key"
  chmod 600 "$DIR/munge/munge.key"
  start_bg munged "$LOG/munged.out" munged --foreground --force --socket="$MUNGE_SOCK" \
    --key-file="$DIR/munge/munge.key" --pid-file="$RUN/munged.daemon.pid" \
    --seed-file="$DIR/munge/munged.seed" --log-file="$LOG/munged.log" --num-threads=2
  for _ in $(seq 100); do
    [ -S "$MUNGE_SOCK" ] && break
    [ -n "$(live_pid munged)" ] || fail "munged exited"
    sleep 0.1
  done
  munge -n -S "$MUNGE_SOCK" 2>/dev/null | unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1 ||
    fail "munged does not answer on $MUNGE_SOCK"

  p1=$(free_port) || fail "no free TCP port"
  p2=$(free_port "$p1") || fail "no free TCP port"
  write_conf "$host" "$p1" "$p2"
  {
    echo "export SLURM_CONF=$CONF"
    echo "export WEFT_SLURM_NODE=$host"
  } >"$DIR/env"

  start_bg slurmctld "$LOG/slurmctld.out" slurmctld -D -c -f "$CONF"
  for _ in $(seq 100); do
    timeout 5 scontrol ping 2>/dev/null | grep -q "is UP" && break
    [ -n "$(live_pid slurmctld)" ] || fail "slurmctld exited"
    sleep 0.2
  done
  start_bg slurmd "$LOG/slurmd.out" slurmd -D -N "$host" -f "$CONF"

  while :; do
    state=$(timeout 5 sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -n1)
    case $state in idle) break ;; esac
    [ -n "$(live_pid slurmctld)" ] || fail "slurmctld exited"
    [ -n "$(live_pid slurmd)" ] || fail "slurmd exited"
    now=$(date +%s.%N)
    if awk -v a="$t0" -v b="$now" -v t="$START_TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
      timeout 5 scontrol show node "$host" >&2 2>/dev/null
      fail "node '$host' not idle after ${START_TIMEOUT}s (state '${state:-unknown}'; reason above)"
    fi
    case $state in
      *drain* | *down* | *fail*)
        # ReturnToService=2 brings a node back once slurmd registers; a persistent reason is fatal
        timeout 5 sinfo -h -R -n "$host" 2>/dev/null | grep -q . && {
          timeout 5 scontrol show node "$host" >&2 2>/dev/null
          fail "node '$host' is $state: $(timeout 5 sinfo -h -R -n "$host" -o '%E' 2>/dev/null)"
        } ;;
    esac
    sleep 0.2
  done
  now=$(date +%s.%N)
  say "up in $(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.1f", b - a }') s: node $host idle, ctld port $p1, slurmd port $p2, munge $MUNGE_SOCK"
  cat "$DIR/env"
}

do_status() {
  local n pid all=0
  for n in munged slurmctld slurmd; do
    pid=$(live_pid "$n")
    if [ -n "$pid" ]; then echo "$n running (pid $pid)"; else echo "$n not running"; all=3; fi
  done
  if [ -n "$(live_pid slurmctld)" ]; then
    timeout 5 sinfo -N -o '%N %P %T %c %E' 2>&1
    timeout 5 squeue 2>&1
  fi
  return $all
}

case $action in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status; exit $? ;;
  *) usage ;;
esac
