#!/usr/bin/env bash
# Cold `smoke` as a new user first runs it: per round, a fresh clone of this
# repository at HEAD and at BASE (node_modules hard-linked from this checkout,
# so no download is timed), then `deno task run experiments/smoke.yaml` on its
# empty cache; the two alternate round by round. Each clone is at a new path,
# so Deno compiles every module it loads, as on a first clone.
#
#   bench/first_command.sh BASE [ROUNDS]     e.g. bench/first_command.sh 3a146d0 3
#
# Prints one line per run: round, tree, wall s, user s, sys s, load average.
set -euo pipefail
base=${1:?usage: bench/first_command.sh BASE_COMMIT [ROUNDS]}
rounds=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  for side in head base; do
    rev=HEAD
    [ "$side" = base ] && rev=$base
    dir="$tmp/$side-$r"
    git clone -q "$repo" "$dir"
    git -C "$dir" checkout -q "$rev"
    cp -al "$repo/node_modules" "$dir/"
    (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$tmp/time" \
      deno task run experiments/smoke.yaml >/dev/null 2>&1)
    echo "$r $side $(cat "$tmp/time") load $(cut -d' ' -f1 /proc/loadavg)"
    rm -rf "$dir"
  done
done
