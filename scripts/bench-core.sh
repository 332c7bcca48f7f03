#!/usr/bin/env bash
# Measures engine's own costs next to hyperfine on the same machine, in one
# invocation, and prints medians and ratios:
#   1. cold start of `engine --version` and `engine list profiles`;
#   2. per-trial cost: engine running /bin/true as the trials of a test,
#      against `hyperfine -N` running /bin/true, each as the slope of total
#      wall time between 10 and 10 + N runs (fixed costs left out).
#   With --against OTHER (another engine binary, e.g. an older build), its
#   start-up runs in the same hyperfine invocation and the ratios are printed.
# Usage: scripts/bench-core.sh [N] [--rounds R] [--against OTHER]
#   (default N = 500 trials, 15 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
N=500
ROUNDS=15
AGAINST=""
while (($#)); do
  case "$1" in
    --against) AGAINST=$(realpath "$2"); shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
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

echo "== per-trial cost: running /bin/true as trials, slope between $SMALL and $((SMALL + N)) trials, $ROUNDS alternating rounds"
# Each round runs every command in a random order, so a drift of the machine
# falls on all alike; the slope leaves out fixed costs (start-up, engine's
# one-off system capture). Printed: the median slope and the median of the
# rounds' own ratios with their quartiles (noise here is ±10 % a round).
python3 - "$ENGINE" "$work" "$SMALL" "$N" "$ROUNDS" <<'PY'
import os, random, statistics, subprocess, sys, time
engine, work, small, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def engine_cmd(*extra):
    return lambda k: [engine, "run", "noop", "--runs", str(k), "-y", "--save", "bench", "--identifier", "x",
                      "--target-dir", f"{work}/t", *extra]
tools = {
    "hyperfine -N": lambda k: ["hyperfine", "-N", "--runs", str(k), "--style", "none", "/bin/true"],
    "engine --logs failed": engine_cmd("--logs", "failed"),
    "engine --logs failed --monitor none": engine_cmd("--logs", "failed", "--monitor", "none"),
    "engine (a log file per trial)": engine_cmd(),
}
def seconds(cmd):
    subprocess.run(["rm", "-rf", os.path.join(os.environ["ENGINE_HOME"], "results")], check=True)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t
slopes = {k: [] for k in tools}
for r in range(rounds):
    jobs = [(k, m) for k in tools for m in (small, small + n)]
    random.shuffle(jobs)
    took = {j: seconds(tools[j[0]](j[1])) for j in jobs}
    for k in tools:
        slopes[k].append((took[(k, small + n)] - took[(k, small)]) / n * 1e6)
h = slopes["hyperfine -N"]
for k, v in slopes.items():
    line = f"  {k + ':':38} {statistics.median(v):8.1f} µs per trial"
    if v is not h:
        q = sorted(a / b for a, b in zip(v, h))
        qs = statistics.quantiles(q, n=4) if len(q) > 1 else [q[0]] * 3
        line += f"   / hyperfine: median {qs[1]:.3f} (quartiles {qs[0]:.3f}–{qs[2]:.3f})"
    print(line)
q = sorted(a / b for a, b in zip(slopes["engine --logs failed"], slopes["engine --logs failed --monitor none"]))
qs = statistics.quantiles(q, n=4) if len(q) > 1 else [q[0]] * 3
print(f"  monitors on / --monitor none: median {qs[1]:.3f} (quartiles {qs[0]:.3f}–{qs[2]:.3f})")
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
