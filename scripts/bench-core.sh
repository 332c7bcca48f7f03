#!/usr/bin/env bash
# Measures engine's own costs next to hyperfine on the same machine, in one
# invocation, and prints medians and ratios:
#   1. cold start of `engine --version` and `engine list profiles`;
#   2. per-trial cost: engine running /bin/true as the trials of a test,
#      against `hyperfine -N` running /bin/true, each as the slope of total
#      wall time between 10 and 10 + N runs (fixed costs left out).
#   With --against OTHER (another engine binary, e.g. an older build), its
#   start-up runs in the same hyperfine invocation and the ratios are printed.
# Usage: scripts/bench-core.sh [N] [--against OTHER]   (default N = 500)
set -euo pipefail
cd "$(dirname "$0")/.."
N=500
AGAINST=""
while (($#)); do
  case "$1" in
    --against) AGAINST=$(realpath "$2"); shift 2 ;;
    *) N=$1; shift ;;
  esac
done
SMALL=10
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)"; exit 1; }
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# engine never creates a --target-dir it is given.
mkdir -p "$work/t"
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$PWD/bench/profiles

median() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); [print(r["command"], statistics.median(r["times"])) for r in d["results"]]' "$1"; }

echo "== start-up (median of hyperfine runs, ms)"
# Both binaries are copied side by side first: the same bytes measured from
# cargo's hard-linked target/ and from a fresh copy differed by 6 % here.
cp "$ENGINE" "$work/engine"
start=("$work/engine --version" "$work/engine list profiles")
if [ -n "$AGAINST" ]; then
  cp "$AGAINST" "$work/against"
  start+=("$work/against --version" "$work/against list profiles")
fi
hyperfine -N --warmup 5 --runs 100 --export-json "$work/start.json" --style none "${start[@]}" >/dev/null
median "$work/start.json" | awk '{t=$NF; $NF=""; printf "  %-60s %.2f ms\n", $0, t*1000}'
if [ -n "$AGAINST" ]; then
  python3 - "$work/start.json" <<'PY'
import json, statistics, sys
m = [statistics.median(r["times"]) for r in json.load(open(sys.argv[1]))["results"]]
print(f"  this build / --against: --version {m[0] / m[2]:.3f}, list profiles {m[1] / m[3]:.3f}")
PY
fi

echo "== per-trial cost: running /bin/true as trials, slope between $SMALL and $((SMALL + N)) trials"
# The slope leaves out fixed costs (start-up, engine's one-off system capture).
hyperfine -N --warmup 1 --runs 10 --export-json "$work/trial.json" --style none \
  "hyperfine -N --runs $SMALL --style none /bin/true" \
  "hyperfine -N --runs $((SMALL + N)) --style none /bin/true" \
  "$ENGINE run noop --runs $SMALL -y --save bench --identifier x --target-dir $work/t --logs failed" \
  "$ENGINE run noop --runs $((SMALL + N)) -y --save bench --identifier x --target-dir $work/t --logs failed" \
  "$ENGINE run noop --runs $SMALL -y --save bench --identifier x --target-dir $work/t" \
  "$ENGINE run noop --runs $((SMALL + N)) -y --save bench --identifier x --target-dir $work/t" \
  --prepare "rm -rf $ENGINE_HOME/results" >/dev/null
python3 - "$work/trial.json" "$N" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
m = [statistics.median(r["times"]) for r in d["results"]]
h, e, l = ((m[i + 1] - m[i]) / n * 1e6 for i in (0, 2, 4))
print(f"  hyperfine -N:                       {h:8.1f} µs per run")
print(f"  engine --logs failed:               {e:8.1f} µs per trial   ratio {e / h:.2f}")
print(f"  engine (a log file per trial):      {l:8.1f} µs per trial   ratio {l / h:.2f}")
print(f"  fixed cost of an engine run (start-up, system capture): {(m[2] - m[0]) * 1000:.1f} ms more than hyperfine's")
PY
python3 - "$work" <<'PY'
import os, sys, time
d = os.path.join(sys.argv[1], "create-probe"); os.makedirs(d)
t = time.perf_counter()
for i in range(200):
    os.close(os.open(f"{d}/f{i}", os.O_CREAT | os.O_WRONLY, 0o644))
print(f"  (creating one empty file here costs {(time.perf_counter() - t) / 200 * 1e6:.1f} µs)")
PY
# What each tool measured for /bin/true itself.
hyperfine -N --runs "$N" --export-json "$work/true.json" --style none /bin/true >/dev/null
rm -rf "$ENGINE_HOME/results"
"$ENGINE" run noop --runs "$N" -y --save bench --identifier x --target-dir "$work/t" --format json >"$work/engine.json" 2>/dev/null
python3 - "$work/true.json" "$work/engine.json" <<'PY'
import json, statistics, sys
h = json.load(open(sys.argv[1]))["results"][0]["times"]
e = json.load(open(sys.argv[2]))["results"][0]["entries"][0]["trials"]
print(f"  /bin/true as measured: hyperfine median {statistics.median(h)*1e6:.1f} µs, engine median {statistics.median(e)*1e6:.1f} µs")
PY
