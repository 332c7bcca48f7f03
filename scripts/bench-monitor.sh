#!/usr/bin/env bash
# What the monitors cost (issue 40): monitors on (the default, 1 s) against
# `--monitor none`, alternating in one invocation, medians and ratios of
#   1. the per-trial cost of /bin/true as a test's trials (bench-core.sh's
#      slope: the wall time between SMALL and SMALL + N trials, over N);
#   2. engine's io workload, 4 KB direct random reads at queue depth 32,
#      2-second trials (IOPS);
#   3. what the sampler itself costs: engine's CPU time (its own and its
#      children's, from wait4) over a 10-second `sleep` trial sampled every
#      100 ms, less the same with --monitor none, per sample — a figure the
#      machine's noise does not hide, unlike 1 and 2.
# Prints the ratio of the medians and the median of the rounds' own ratios.
# Usage: scripts/bench-monitor.sh [ROUNDS] [N] [--target-dir DIR]
#   (default 15 rounds, N = 300; the io test runs in DIR, default a folder
#   under /var/tmp, on the disk)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=15
N=300
TARGET=""
rest=()
while (($#)); do
  case "$1" in
    --target-dir) TARGET=$(realpath "$2"); shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
[ ${#rest[@]} -ge 1 ] && ROUNDS=${rest[0]}
[ ${#rest[@]} -ge 2 ] && N=${rest[1]}
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/t"
[ -n "$TARGET" ] || { TARGET=$(mktemp -d /var/tmp/engine-bench-monitor.XXXXXX); trap 'rm -rf "$work" "$TARGET"' EXIT; }
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$PWD/bench/profiles
python3 - "$ENGINE" "$work" "$TARGET" "$ROUNDS" "$N" <<'PY'
import json, os, random, statistics, subprocess, sys, time
engine, work, target, rounds, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
small = 10
modes = {"on": [], "none": ["--monitor", "none"]}

def run(args):
    subprocess.run([engine, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def trials(k, mode):
    """Seconds for k trials of /bin/true."""
    subprocess.run(["rm", "-rf", os.path.join(work, "home", "results")], check=True)
    t = time.perf_counter()
    run(["run", "noop", "--runs", str(k), "-y", "--save", "b", "--identifier", "x",
         "--target-dir", os.path.join(work, "t"), "--logs", "failed", *modes[mode]])
    return time.perf_counter() - t

def iops(mode, k):
    name = f"io-{mode}-{k}"
    run(["benchmark", "io", "-o", "type=randread", "-o", "engine=io_uring", "-o", "direct=yes",
         "-o", "block_size=4KB", "-o", "depth=32", "-o", "jobs=1", "-o", "file_size=256 MiB", "-o", "runtime=2 Seconds",
         "--runs", "3", "-y", "--save", name, "--target-dir", target, *modes[mode]])
    f = json.load(open(os.path.join(work, "home", "results", name, "result.json")))
    return next(r for r in f["results"] if r["result"] == "iops")["entries"][0]["value"]

slope = {m: [] for m in modes}
io = {m: [] for m in modes}
for k in range(rounds):
    order = list(modes)
    random.shuffle(order)
    for m in order:
        slope[m].append((trials(small + n, m) - trials(small, m)) / n * 1e6)
        io[m].append(iops(m, k))
    print(f"  round {k + 1}/{rounds}: " + "  ".join(f"{m}: {slope[m][-1]:.0f} µs/trial, {io[m][-1]:.0f} IOPS" for m in modes), flush=True)

med = {m: (statistics.median(slope[m]), statistics.median(io[m])) for m in modes}

def cpu_seconds(mode):
    subprocess.run(["rm", "-rf", os.path.join(work, "home", "results")], check=True)
    extra = ["--monitor-interval", "100ms"] if mode == "on" else modes[mode]
    p = subprocess.Popen([engine, "benchmark", "nap", "--runs", "1", "-y", "--target-dir", os.path.join(work, "t"), *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    assert status == 0, status
    return ru.ru_utime + ru.ru_stime

cost = {m: [] for m in modes}
for k in range(max(3, rounds // 3)):
    for m in modes:
        cost[m].append(cpu_seconds(m))

def paired(xs, ys):
    """Median and quartiles of the per-round ratios: each round ran both
    modes back to back, so a ratio within a round cancels the machine's
    drift between rounds (this VM's IOPS swing ±20 % from one to the next)."""
    r = sorted(x / y for x, y in zip(xs, ys))
    q = statistics.quantiles(r, n=4) if len(r) >= 2 else [r[0]] * 3
    return f"median of the {len(r)} rounds' ratios {statistics.median(r):.3f} (quartiles {q[0]:.3f}–{q[2]:.3f})"
print(f"== per-trial cost of /bin/true (median of {rounds} slopes over {n} trials)")
for m in modes:
    print(f"  monitors {m:5} {med[m][0]:8.1f} µs per trial")
print(f"  ratio on / none: {med['on'][0] / med['none'][0]:.3f}; {paired(slope['on'], slope['none'])}")
print(f"== io 4 KB random reads, QD32, direct (median of {rounds} runs of 3 trials)")
for m in modes:
    print(f"  monitors {m:5} {med[m][1]:10.0f} IOPS")
print(f"  ratio on / none: {med['on'][1] / med['none'][1]:.3f}; {paired(io['on'], io['none'])}")
per = (statistics.median(cost["on"]) - statistics.median(cost["none"])) / 100
print(f"== the sampler's own CPU time (median of {len(cost['on'])} runs of a 10 s trial, 100 samples)")
print(f"  {per * 1e6:.0f} µs per sample, the series' writing included: {per * 100:.3f} % of one core at the default 1 s")
PY
