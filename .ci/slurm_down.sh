#!/usr/bin/env bash
# Stops the Slurm daemons that slurm_up.sh started (and only those), by the
# process ids it recorded in STATE_FILE, in reverse order of starting.
#
# Usage: .ci/slurm_down.sh STATE_FILE
set -uo pipefail
state=${1:?usage: slurm_down.sh STATE_FILE}
[ -f "$state" ] || exit 0
tac "$state" | while read -r name pid; do
  [ -n "${pid:-}" ] || continue
  # Only if that pid still is the daemon we started.
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
      [ -e "/proc/$pid" ] || break
      sleep 0.2
    done
    echo "slurm: stopped $name (pid $pid)" >&2
  fi
done
rm -f "$state"
