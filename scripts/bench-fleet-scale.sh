#!/usr/bin/env bash
# A fleet in one result (issue 42): synthetic fleets (scripts/fleet-synth.py:
# 68 results × 5 trials a host, device counters per trial) of each size
# given, merged with `engine result merge`; prints per size the merge's wall
# time and peak memory (GNU time), the merged result's size (result.json +
# the bulk file beside it), `result show`'s, `result history`'s and `result
# odd`'s time and peak memory, and the HTML report's size.
# Goals at 10,000 hosts: merge ≤ 10 s and ≤ 1 GB, show ≤ 2 s, HTML ≤ 5 MB.
# Usage: scripts/bench-fleet-scale.sh [HOSTS…]   (default 1000 5000 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 5000 10000)
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d /var/tmp/engine-fleet.XXXXXX)
trap 'rm -rf "$work"' EXIT
export ENGINE_HOME=$work/home
measure() { # LABEL CMD… → "seconds peak-MB" (the command's output discarded)
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { echo "$1 failed:" >&2; tail -3 "$work/err" >&2; exit 1; }
  awk '{printf "%.2f s %5.0f MB", $1, $2 / 1024}' "$work/time"
}
printf '%-7s %-22s %-18s %-22s %-22s %-22s %s\n' hosts merge "merged (+bulk)" show history odd html
for n in "${sizes[@]}"; do
  python3 scripts/fleet-synth.py "$n" "$work/h$n" --slow $(( n / 1000 ))
  merge=$(measure "$ENGINE" result merge "$work"/h"$n"/host-*/result.json --save "f$n")
  size=$(du -m "$ENGINE_HOME/results/f$n/result.json" | cut -f1)
  bulk=$(cat "$ENGINE_HOME/results/f$n"/bulk-*.bin 2>/dev/null | wc -c)
  show=$(measure "$ENGINE" result show "f$n")
  history=$(measure "$ENGINE" result history "f$n")
  odd=$(measure "$ENGINE" result odd "f$n")
  "$ENGINE" result show "f$n" --format html > "$work/f$n.html" 2>/dev/null || true
  html=$(( $(stat -c %s "$work/f$n.html") / 1024 ))
  printf '%-7s %-22s %-18s %-22s %-22s %-22s %s\n' "$n" "$merge" "${size} + $(( bulk >> 20 )) MiB" "$show" "$history" "$odd" "${html} KiB"
  rm -rf "$work/h$n"
done
