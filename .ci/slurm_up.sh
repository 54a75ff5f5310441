#!/usr/bin/env bash
# Brings up a single-node Slurm cluster on this machine for the integration
# tests (cli_slurm_test.ts): installs slurm-wlm and munge from Debian when
# sbatch is missing, writes a minimal slurm.conf, and starts munged,
# slurmctld and slurmd unless they already run. Every daemon it starts is
# written to the state file ("name pid" per line) so slurm_down.sh stops
# exactly those. Never fails the build: without root, packages or a working
# controller it says why, and the Slurm tests skip themselves.
#
# Usage: .ci/slurm_up.sh STATE_FILE   (env: ENVSMITH_SLURM_DIR, default /tmp/envsmith-slurm)
set -uo pipefail
state=${1:?usage: slurm_up.sh STATE_FILE}
dir=${ENVSMITH_SLURM_DIR:-/tmp/envsmith-slurm}
: >"$state"
say() { echo "slurm: $*" >&2; }

# (sinfo retries for a while when no controller answers: bounded by timeout)
answers() { timeout 10 sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)'; }

if command -v sbatch >/dev/null 2>&1 && answers; then
  say "a controller already answers; using it as it is"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "not root: cannot install or start Slurm here; the Slurm tests will be skipped"
  exit 0
fi
if ! command -v sbatch >/dev/null 2>&1 || ! command -v slurmctld >/dev/null 2>&1 \
  || ! command -v munged >/dev/null 2>&1; then
  say "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq slurm-wlm munge; } >/dev/null 2>&1; then
    say "apt-get install slurm-wlm munge failed; the Slurm tests will be skipped"
    exit 0
  fi
fi
munged_bin=$(command -v munged || echo /usr/sbin/munged)
ctld_bin=$(command -v slurmctld || echo /usr/sbin/slurmctld)
slurmd_bin=$(command -v slurmd || echo /usr/sbin/slurmd)

host=$(hostname -s)
if ! getent hosts "$host" >/dev/null; then
  say "warning: the host name $host does not resolve; slurmd may not reach slurmctld"
fi

# The configuration is written only when no Slurm daemon runs (a running
# cluster keeps its own).
if ! pgrep -x slurmctld >/dev/null && ! pgrep -x slurmd >/dev/null; then
  mkdir -p "$dir"/state "$dir"/spool "$dir"/log
  chown -R slurm:slurm "$dir" 2>/dev/null || true
  cpus=$(nproc)
  mem=$(($(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 512))
  conf=/etc/slurm/slurm.conf
  mkdir -p /etc/slurm
  if [ -s "$conf" ] && ! grep -q '^# envsmith CI' "$conf"; then
    cp "$conf" "$conf.envsmith-backup"
    say "kept the previous $conf as $conf.envsmith-backup"
  fi
  cat >"$conf" <<CONF
# envsmith CI: a single-node cluster for the integration tests (.ci/slurm_up.sh)
ClusterName=envsmith
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=slurm
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
fi

pidof_file() { [ -s "$1" ] && cat "$1"; }

if ! pgrep -x munged >/dev/null; then
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  fi
  if runuser -u munge -- "$munged_bin" 2>/dev/null; then
    sleep 0.2
    echo "munged $(pidof_file /run/munge/munged.pid || pgrep -x -n munged)" >>"$state"
  else
    say "munged did not start; the Slurm tests will be skipped"
    exit 0
  fi
fi
if ! pgrep -x slurmctld >/dev/null; then
  if "$ctld_bin"; then
    sleep 0.2
    echo "slurmctld $(pidof_file "$dir/slurmctld.pid" || pgrep -x -n slurmctld)" >>"$state"
  else
    say "slurmctld did not start; the Slurm tests will be skipped"
  fi
fi
if ! pgrep -x slurmd >/dev/null; then
  if "$slurmd_bin"; then
    sleep 0.2
    echo "slurmd $(pidof_file "$dir/slurmd.pid" || pgrep -x -n slurmd)" >>"$state"
  else
    say "slurmd did not start; the Slurm tests will be skipped"
  fi
fi
start=$SECONDS
while [ $((SECONDS - start)) -lt 60 ]; do
  if answers; then
    say "up after $((SECONDS - start))s: $(timeout 10 sinfo -h -o '%P %D node(s) %T' | head -n 1)"
    exit 0
  fi
  if ! pgrep -x slurmctld >/dev/null || ! pgrep -x slurmd >/dev/null; then
    say "a Slurm daemon exited; the Slurm tests will be skipped"
    break
  fi
  sleep 1
done
say "no idle node; the Slurm tests will be skipped"
tail -n 5 "$dir"/log/*.log >&2 2>/dev/null || true
exit 0
