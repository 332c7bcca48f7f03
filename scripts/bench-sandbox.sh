#!/usr/bin/env bash
# Confined against unconfined on the same real profiles (pgbench on its
# quick 3 s entry), alternating in one
# invocation (test by test: round k runs the test --sandbox then
# --no-sandbox, the order swapped every round), and prints per result the
# median of each and the
# ratio confined / unconfined as performance (lower-is-better values
# inverted, so above 1 means the confined run did better). Goal: ≥ 0.98×.
# Then what confinement adds to one system call (`dd bs=1`).
# Root (the sandbox's namespaces and cgroups). Needs the tools
# (scripts/install-deps.sh --tests).
# Then a compile: Linux 6.1 with tinyconfig, one trial a side per round
# (BENCH_KERNEL=0 skips its ~6 minutes a round).
# BENCH_ONLY=nginx,pgbench,kernel runs only the parts whose names it lists
# (a test's profile id, `syscalls`, `calls`, `setup`, `kernel`; `calls`
# needs `syscalls`).
# BENCH_RAM=6G puts the tests' files on an ext4 in memory (see below).
# Usage: scripts/bench-sandbox.sh [ROUNDS] [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-sandbox.sh needs root: the sandbox uses namespaces and cgroups" >&2; exit 2; }
rounds=${1:-3}
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
loopdev=
cleanup() {
  if [ -n "$loopdev" ]; then
    umount "$work/target" 2>/dev/null || umount -l "$work/target" 2>/dev/null || true
    losetup -d "$loopdev" 2>/dev/null || true
  fi
  rm -f "/dev/shm/bench-sandbox-$$.img"
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
target=${2:-$work/target}
mkdir -p "$target" "$work/profiles/suites"
# BENCH_RAM=SIZE (e.g. 6G): the tests' files on an ext4 in memory (a loop
# device over a file in /dev/shm) instead of TARGET_DIR. Confinement changes
# what a process may reach, not the device: in memory the device's noise
# (tens of per cent a round on a virtual disk) is gone and what the sandbox
# costs in CPU is the largest share of each trial it can be.
if [ -n "${BENCH_RAM:-}" ] && [ -z "${2:-}" ]; then
  truncate -s "$BENCH_RAM" "/dev/shm/bench-sandbox-$$.img"
  loopdev=$(losetup -f --show "/dev/shm/bench-sandbox-$$.img")
  # Inode tables and journal written now: ext4's lazy init would write them
  # in the background during the first tests.
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loopdev"
  mount "$loopdev" "$target"
fi
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$work/profiles ENGINE_MACHINE_LOCK=$work/machine.lock
cat > "$work/profiles/suites/bench-sandbox.yaml" <<'YAML'
title: Confined or not
tests:
  - {profile: fio, options: {type: Random Read, engine: IO_uring, direct: "Yes", block_size: 4KB (engine quick)}}
  - {profile: fio, options: {type: Sequential Write, engine: Linux AIO, direct: "Yes", block_size: 2MB (engine quick)}}
  - {profile: fs-mark, options: {test: "100 Files, 1MB Size, No Sync/FSync"}}
  - {profile: sqlite, options: {copies: "1 (engine quick: 3 x 100 inserts)"}}
  - {profile: nginx, options: {concurrency: "20", requests: "100000"}}
  - {profile: dbench, options: {clients: "1 (engine quick: 5 s)"}}
  - {profile: pgbench, options: {scaling_factor: "1", clients: "1 (engine quick: 3 s)", mode: Read Write}}
  - {profile: compress-gzip, options: {file_size: 16MB}}
YAML
# One test at a time, its confined and unconfined runs alternating (the
# order swapped every round): this machine's level drifts by tens of per
# cent over minutes, so both sides of a ratio are measured minutes apart at
# most.
# `wanted NAME`: whether BENCH_ONLY (when set) lists NAME.
wanted() { [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",$1,"* ]]; }
python3 - "$work/profiles/suites/bench-sandbox.yaml" "$work/profiles/suites" "${BENCH_ONLY:-}" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
only = [n for n in sys.argv[3].split(",") if n]
items = [l for l in lines if l.startswith("  - ")]
items = [l for l in items if not only or re.search(r"profile: ([\w-]+)", l).group(1) in only]
for i, l in enumerate(items):
    open(f"{sys.argv[2]}/bench-sandbox-{i}.yaml", "w").write(f"title: Test {i}\ntests:\n{l}\n")
PY
ntests=$(ls "$work/profiles/suites" | grep -c '^bench-sandbox-' || true)
for t in $(seq 0 $((ntests - 1))); do
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="sandbox no-sandbox"; else order="no-sandbox sandbox"; fi
    for mode in $order; do
      "$ENGINE" benchmark "suite/bench-sandbox-$t" "--$mode" -y --runs 3 --target-dir "$target" \
        --save "t$t-r$r-$mode" --format json >/dev/null 2>"$work/t$t-r$r-$mode.err" \
        || { echo "test $t round $r --$mode failed:"; tail -5 "$work/t$t-r$r-$mode.err"; exit 1; }
    done
  done
done
[ "$ntests" = 0 ] || python3 - "$ENGINE_HOME/results" "$rounds" <<'PY'
import json, math, os, statistics, sys
root, rounds = sys.argv[1], int(sys.argv[2])
# vals[key][mode]: every trial; rounds_[key][r][mode]: round r's trials.
vals, rounds_ = {}, {}
for name in sorted(n for n in os.listdir(root) if n.startswith("t")):
    mode = "no-sandbox" if name.endswith("no-sandbox") else "sandbox"
    r = int(name.split("-")[1][1:])
    f = json.load(open(os.path.join(root, name, "result.json")))
    for t in f["results"]:
        key = (t["title"], t["description"], t["unit"], t["proportion"])
        for e in t["entries"]:
            vals.setdefault(key, {}).setdefault(mode, []).extend(e["trials"])
            rounds_.setdefault(key, {}).setdefault(r, {}).setdefault(mode, []).extend(e["trials"])
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
def perf(a, b, prop):
    return a / b if prop == "HIB" else b / a
ratios = []
print(f"{'result':<60} {'unconfined':>10} {'confined':>10} {'ratio':>6}  {'paired (95 %)':>22}")
for key, v in vals.items():
    title, desc, unit, prop = key
    a, b = statistics.median(v["sandbox"]), statistics.median(v["no-sandbox"])
    ratio = perf(a, b, prop)
    ratios.append(ratio)
    # Each round's ratio of medians (both sides minutes apart at most), then
    # their geometric mean with Student's t on the logs: the drift between
    # rounds cancels within each pair.
    logs = [math.log(perf(statistics.median(m["sandbox"]), statistics.median(m["no-sandbox"]), prop))
            for m in rounds_[key].values() if m.get("sandbox") and m.get("no-sandbox")]
    paired = ""
    if len(logs) >= 2:
        mean = statistics.fmean(logs)
        h = (T95[len(logs) - 2] if len(logs) - 1 <= len(T95) else 1.96) * statistics.stdev(logs) / math.sqrt(len(logs))
        paired = f"{math.exp(mean):.3f} [{math.exp(mean - h):.3f}, {math.exp(mean + h):.3f}]"
    print(f"{(title + ': ' + desc)[:48] + ' [' + unit + ']':<60} {b:>10.4g} {a:>10.4g} {ratio:>6.3f}  {paired:>22}")
print(f"median ratio confined / unconfined (as performance): {statistics.median(ratios):.3f} over {len(ratios)} results"
      f"; lowest {min(ratios):.3f}   (goal ≥ 0.98)")
PY

# `paired SUITE PREFIX RUNS`: the suite confined and unconfined, alternating
# for the rounds, RUNS trials each; prints the confined median, the
# unconfined median and the trials a side.
paired() {
  for r in $(seq 1 "$rounds"); do
    for mode in sandbox no-sandbox; do
      "$ENGINE" benchmark "suite/$1" "--$mode" -y --runs "$3" --target-dir "$target" --save "$2$r-$mode" --format json >/dev/null 2>&1
    done
  done
  python3 - "$ENGINE_HOME/results" "$rounds" "$2" <<'PY'
import json, os, statistics, sys
root, rounds, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
v = {m: [] for m in ("sandbox", "no-sandbox")}
for r in range(1, rounds + 1):
    for m in v:
        v[m] += json.load(open(os.path.join(root, f"{prefix}{r}-{m}", "result.json")))["results"][0]["entries"][0]["trials"]
print(statistics.median(v["sandbox"]), statistics.median(v["no-sandbox"]), len(v["sandbox"]))
PY
}

# What confinement costs per system call: `dd bs=1` makes two per byte.
cat > "$work/profiles/suites/syscalls.yaml" <<'YAML'
title: System calls
tests:
  - profile: syscalls
YAML
mkdir -p "$work/profiles/test-profiles/syscalls"
cat > "$work/profiles/test-profiles/syscalls/profile.yaml" <<'YAML'
id: syscalls
version: 1.0.0
title: 4 M system calls
test_type: other
executor:
  external:
    program: dd
    args: ["if=/dev/zero", "of=/dev/null", "bs=1", "count=2000000"]
results: [{id: s, unit: Seconds, proportion: LIB}]
parsers: [{result: s, wall_time: true}]
YAML
percall=
if wanted syscalls; then
  read -r a b n < <(paired syscalls s 5)
  percall=$(python3 -c "print(max(0.0, ($a - $b) / 4e6))")
  python3 -c "a, b = $a, $b; print(f'4 M system calls (dd bs=1): confined {a:.3f} s, unconfined {b:.3f} s: {(a - b) / 4e6 * 1e9:.0f} ns more per call')"
fi
# What the filter can cost each test at most: the highest rate of system
# calls on the whole machine in any 200 ms of the test's unconfined run
# (`perf stat -a -I 200`, every task counted, engine's own set-up too) times
# the cost per call above, as a share of wall time — as if every call of
# every task were on the trial's critical path. A bound that needs no
# rounds: the end-to-end ratios above cannot resolve 2 % on a noisy VM.
if [ -n "$percall" ] && wanted calls && command -v perf >/dev/null; then
  echo "the filter's share of each test's time at most (highest calls/s in any 200 ms × $(python3 -c "print(f'{$percall * 1e9:.0f}')") ns):"
  for t in $(seq 0 $((ntests - 1))); do
    perf stat -a -e raw_syscalls:sys_enter -x, -I 200 -o "$work/calls-$t.csv" -- \
      "$ENGINE" benchmark "suite/bench-sandbox-$t" --no-sandbox -y --runs 3 --target-dir "$target" \
      --save "calls-$t" --format json >/dev/null 2>&1 || { echo "test $t under perf failed"; continue; }
    python3 - "$work/calls-$t.csv" "$percall" "$work/profiles/suites/bench-sandbox-$t.yaml" <<'PY'
import re, sys
rows = [l.split(",") for l in open(sys.argv[1]) if l[:1].isdigit() or l[:1] == " "]
# -I rows: time, count, unit, event, ...; each count is for its own 200 ms.
rates, last = [], 0.0
for r in rows:
    t, c = float(r[0]), r[1].strip()
    if c.isdigit():
        rates.append(int(c) / (t - last))
    last = t
test = re.search(r"\{profile: ([\w-]+)(.*)\}", open(sys.argv[3]).read().splitlines()[-1])
peak = max(rates)
print(f"  {(test.group(1) + test.group(2))[:70]:<70} {peak:>10,.0f} calls/s  {peak * float(sys.argv[2]) * 100:.2f} %")
PY
  done
fi
# What confinement adds to a trial's time, and what setting a confined
# command up costs engine. `/bin/true` timed confined and unconfined: its
# trials' medians (the clock runs from the command's exec to its end, so
# the set-up is not in them); then the set-up per command — the fork, the
# new root's mounts, `pivot_root`, the namespaces joined, the cgroup, the
# filter, the teardown — as the slope of engine's own wall time between
# 20 and 60 trials, confined minus unconfined.
mkdir -p "$work/profiles/test-profiles/true"
cat > "$work/profiles/test-profiles/true/profile.yaml" <<'YAML'
id: true
version: 1.0.0
title: /bin/true
test_type: other
executor:
  external:
    program: /bin/true
results: [{id: s, unit: Seconds, proportion: LIB}]
parsers: [{result: s, wall_time: true}]
YAML
printf 'title: true\ntests:\n  - profile: true\n' > "$work/profiles/suites/true.yaml"
wanted setup && paired true u 20 | { read -r a b n; python3 -c "a, b, n = $a, $b, $n; print(f'a trial of /bin/true ({n} trials a side): confined {a * 1e3:.3f} ms, unconfined {b * 1e3:.3f} ms: {(a - b) * 1e3:.3f} ms more')"; }
# `took MODE RUNS`: engine's wall time for RUNS trials of /bin/true, seconds.
took() {
  local t0 t1
  t0=$(date +%s.%N)
  "$ENGINE" benchmark suite/true "--$1" -y --runs "$2" --monitor none --target-dir "$target" --format json >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
slopes=()
wanted setup && for r in $(seq 1 "$rounds"); do
  s20=$(took sandbox 20); s60=$(took sandbox 60); u20=$(took no-sandbox 20); u60=$(took no-sandbox 60)
  slopes+=("$(python3 -c "print((($s60 - $s20) - ($u60 - $u20)) / 40)")")
done
wanted setup && python3 -c "import statistics; v = [$(IFS=,; echo "${slopes[*]}")]; print(f'set-up per confined command (engine wall time, 20 vs 60 trials, median of {len(v)} rounds): {statistics.median(v) * 1e3:.2f} ms')"
# A compile: Linux 6.1 (Debian's linux-source-6.1) built with tinyconfig,
# confined and not, one trial a side per round (each about 3 minutes on 2
# cores, the tree unpacked and configured untimed before it). Skipped, and
# said so, where the source package is not installed or BENCH_KERNEL=0.
if ! wanted kernel; then
  :
elif [ "${BENCH_KERNEL:-1}" = 1 ] && [ -f /usr/src/linux-source-6.1.tar.xz ]; then
  printf 'title: Kernel\ntests:\n  - {profile: build-linux-kernel, options: {build: tinyconfig, source: "Linux 6.1 (Debian linux-source-6.1)"}}\n' \
    > "$work/profiles/suites/kernel.yaml"
  paired kernel k 1 | { read -r a b n; python3 -c "a, b, n = $a, $b, $n; print(f'Linux 6.1 tinyconfig build ({n} trials a side): confined {a:.1f} s, unconfined {b:.1f} s: ratio (as performance) {b / a:.3f}')"; }
elif [ "${BENCH_KERNEL:-1}" = 1 ]; then
  echo "Linux tinyconfig build: skipped (needs /usr/src/linux-source-6.1.tar.xz: scripts/install-deps.sh --tests; BENCH_KERNEL=0 skips it)"
fi
