#!/usr/bin/env bash
# Confined against unconfined on the same real profiles (pgbench on its
# quick 3 s entry), alternating in one invocation (test by test: round k
# runs the test --sandbox then --no-sandbox, the order swapped every
# round), and prints per result the median of each, the ratio confined /
# unconfined as performance (lower-is-better values inverted, so above 1
# means the confined run did better) and the paired ratio with its 95 %
# interval. Goal: within 2 %.
# Then a compile: Linux 6.1 with tinyconfig, one trial a side per round
# (BENCH_KERNEL=0 skips its ~6 minutes a round).
# Then what confinement adds to a system call of each kind (plain,
# inspected by the filter, an open), the most it can take of each test
# (its own calls by kind, in its busiest 200 ms, times those costs), what
# it adds to a `/bin/true` trial and engine's set-up per command.
# Root (the sandbox's namespaces and cgroups). Needs the tools
# (scripts/install-deps.sh --tests), perf and a C compiler.
# BENCH_ONLY=nginx,pgbench,kernel runs only the parts whose names it lists
# (a test's profile id, `syscalls`, `calls`, `setup`, `kernel`; `calls`
# needs `syscalls`).
# BENCH_RAM=6G puts the tests' files on an ext4 in memory (see below).
# BENCH_ENGINE=PATH runs that engine binary instead of building this tree's
# (to compare two builds: run the script once with each).
# Usage: scripts/bench-sandbox.sh [ROUNDS] [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-sandbox.sh needs root: the sandbox uses namespaces and cgroups" >&2; exit 2; }
rounds=${1:-3}
if [ -n "${BENCH_ENGINE:-}" ]; then
  ENGINE=$(realpath "$BENCH_ENGINE")
else
  cargo build --release --quiet
  ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
fi
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

# `alternate SUITE PREFIX RUNS`: the suite confined and unconfined,
# alternating for the rounds (the order swapped every round), RUNS trials
# each, saved as PREFIX<round>-<mode>.
alternate() {
  local r mode order
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="sandbox no-sandbox"; else order="no-sandbox sandbox"; fi
    for mode in $order; do
      "$ENGINE" benchmark "suite/$1" "--$mode" -y --runs "$3" --target-dir "$target" --save "$2$r-$mode" --format json >/dev/null 2>&1
    done
  done
}
# `paired SUITE PREFIX RUNS`: `alternate`, then prints the confined median,
# the unconfined median, the trials a side and the paired ratio unconfined
# / confined with its 95 % interval (each round's ratio of medians, Student's
# t on their logs; "-" with one round).
paired() {
  alternate "$@"
  python3 - "$ENGINE_HOME/results" "$rounds" "$2" <<'PY'
import json, math, os, statistics, sys
root, rounds, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131]
v = {m: [] for m in ("sandbox", "no-sandbox")}
logs = []
for r in range(1, rounds + 1):
    one = {m: json.load(open(os.path.join(root, f"{prefix}{r}-{m}", "result.json")))["results"][0]["entries"][0]["trials"]
           for m in v}
    for m in v:
        v[m] += one[m]
    logs.append(math.log(statistics.median(one["no-sandbox"]) / statistics.median(one["sandbox"])))
paired = "- -"
if len(logs) >= 2:
    mean = statistics.fmean(logs)
    h = (T95[len(logs) - 2] if len(logs) - 1 <= len(T95) else 1.96) * statistics.stdev(logs) / math.sqrt(len(logs))
    paired = f"{math.exp(mean):.3f} [{math.exp(mean - h):.3f},{math.exp(mean + h):.3f}]"
print(statistics.median(v["sandbox"]), statistics.median(v["no-sandbox"]), len(v["sandbox"]), paired)
PY
}

# A compile: Linux 6.1 (Debian's linux-source-6.1) built with tinyconfig,
# confined and not, one trial a side per round (each about 3 minutes on 2
# cores, the tree unpacked and configured untimed before it). Skipped, and
# said so, where the source package is not installed or BENCH_KERNEL=0.
if ! wanted kernel; then
  :
elif [ "${BENCH_KERNEL:-1}" = 1 ] && [ -f /usr/src/linux-source-6.1.tar.xz ]; then
  printf 'title: Kernel\ntests:\n  - {profile: build-linux-kernel, options: {build: tinyconfig, source: "Linux 6.1 (Debian linux-source-6.1)"}}\n' \
    > "$work/profiles/suites/kernel.yaml"
  paired kernel k 1 | { read -r a b n p i; python3 -c "a, b, n = $a, $b, $n; print(f'Linux 6.1 tinyconfig build ({n} trials a side): confined {a:.1f} s, unconfined {b:.1f} s: ratio (as performance) {b / a:.3f}, paired $p $i')"; }
elif [ "${BENCH_KERNEL:-1}" = 1 ]; then
  echo "Linux tinyconfig build: skipped (needs /usr/src/linux-source-6.1.tar.xz: scripts/install-deps.sh --tests; BENCH_KERNEL=0 skips it)"
fi
# What confinement costs per system call, by kind, for the bound below. A
# call the filters pass without looking at its arguments is answered by
# the kernel's cache of constant verdicts (any seccomp filter at all costs
# it the same: the kernel's slower path in and out); a call they inspect
# (an ioctl, a socket, a clone, a mode) runs every program of the filter;
# an open also does what an open does in the sandbox (measured: far more
# than the filter). `dd bs=1` makes two plain calls a byte; a small C loop
# makes ioctls (TCGETS on /dev/null: ENOTTY) and open+close of one file in
# the test's directory. Each cost: the median difference per call,
# confined minus unconfined, over the rounds.
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
mkdir -p "$work/profiles/test-profiles/calls"
cat > "$work/calls.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
int main(int argc, char **argv) {
  long n = atol(argv[2]);
  if (!strcmp(argv[1], "ioctl")) {
    struct termios t;
    int fd = open("/dev/null", O_RDONLY);
    for (long i = 0; i < n; i++) ioctl(fd, TCGETS, &t);
  } else {
    close(open("f", O_CREAT | O_WRONLY, 0644));
    for (long i = 0; i < n; i++) close(open("f", O_RDONLY));
  }
  return 0;
}
C
kinds=
if command -v cc >/dev/null && cc -O2 -o "$work/profiles/test-profiles/calls/calls" "$work/calls.c"; then
  kinds=1
  cat > "$work/profiles/test-profiles/calls/profile.yaml" <<'YAML'
id: calls
version: 1.0.0
title: System calls of a kind
test_type: other
options:
  - id: kind
    name: Kind
    default: [ioctl]
    entries:
      - {label: ioctl, values: {k: ioctl, n: "2000000"}}
      - {label: open, values: {k: open, n: "400000"}}
executor:
  external:
    program: "{{profile_dir}}/calls"
    args: ["{{k}}", "{{n}}"]
results: [{id: s, unit: Seconds, proportion: LIB}]
parsers: [{result: s, wall_time: true}]
YAML
  printf 'title: ioctl\ntests:\n  - {profile: calls, options: {kind: ioctl}}\n' > "$work/profiles/suites/ioctl.yaml"
  printf 'title: open\ntests:\n  - {profile: calls, options: {kind: open}}\n' > "$work/profiles/suites/open.yaml"
else
  echo "no C compiler: only plain calls are costed (scripts/install-deps.sh installs gcc)"
fi
# `per_call SUITE PREFIX CALLS`: seconds more per call confined, the median
# of the rounds' differences of medians (5 trials a side a round).
per_call() {
  alternate "$1" "$2" 5
  python3 - "$ENGINE_HOME/results" "$rounds" "$2" "$3" <<'PY'
import json, os, statistics, sys
root, rounds, prefix, calls = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
def median(r, m):
    return statistics.median(json.load(open(os.path.join(root, f"{prefix}{r}-{m}", "result.json")))["results"][0]["entries"][0]["trials"])
print(max(0.0, statistics.median(median(r, "sandbox") - median(r, "no-sandbox") for r in range(1, rounds + 1)) / calls))
PY
}
plain= inspected= opened=
if wanted syscalls; then
  plain=$(per_call syscalls s 4e6)
  msg="more per system call confined: plain $(python3 -c "print(f'{$plain * 1e9:.0f}')") ns"
  if [ -n "$kinds" ]; then
    inspected=$(per_call ioctl i 2e6)
    # An open and a close per loop: the close is a plain call.
    opened=$(python3 -c "print(max(0.0, $(per_call open o 4e5) - $plain))")
    msg="$msg, inspected (ioctl) $(python3 -c "print(f'{$inspected * 1e9:.0f}')") ns, open $(python3 -c "print(f'{$opened * 1e9:.0f}')") ns"
  fi
  echo "$msg (median of $rounds rounds' differences of medians)"
fi
# What the sandbox can cost each test at most: in each 200 ms of the test's
# unconfined run, the calls of its own processes (engine and everything it
# started: `perf stat` on engine, inherited by every child) counted by kind
# — opens, other calls the filter inspects, the rest — times each kind's
# cost above, as a share of those 200 ms; the highest such share. As if
# every call were on the trial's critical path (on 2 cores, calls made in
# parallel count twice): a bound that needs no rounds, since the
# end-to-end ratios above cannot resolve 2 % on a noisy VM. The numbers
# are x86-64's: open, openat, creat, openat2; ioctl, socket, socketpair,
# clone, clone3, unshare, fallocate, the chmod and mknod calls, the xattr
# writes (crates/engine-sys/src/seccomp.rs lists what its programs look at).
opens='id == 2 || id == 257 || id == 85 || id == 437'
looked='id == 16 || id == 41 || id == 53 || id == 56 || id == 435 || id == 272 || id == 285 || id == 90 || id == 91 || id == 268 || id == 452 || id == 133 || id == 259 || id == 188 || id == 189 || id == 190 || id == 463'
if wanted calls && ! command -v perf >/dev/null; then
  echo "the bound per test: skipped (needs perf: apt-get install linux-perf)"
fi
if [ -n "$plain" ] && wanted calls && command -v perf >/dev/null && [ "$(uname -m)" = x86_64 ]; then
  echo "the sandbox's share of each test's time at most (calls of its own processes in its busiest 200 ms × each kind's cost):"
  suites=$(seq -f "bench-sandbox-%g" 0 $((ntests - 1)))
  [ -f "$work/profiles/suites/kernel.yaml" ] && suites="$suites kernel"
  for t in $suites; do
    perf stat -x, -I 200 -o "$work/calls-$t.csv" -e raw_syscalls:sys_enter \
      -e raw_syscalls:sys_enter --filter "$opens" -e raw_syscalls:sys_enter --filter "$looked" -- \
      "$ENGINE" benchmark "suite/$t" --no-sandbox -y --runs 1 --target-dir "$target" \
      --save "calls-$t" --format json >/dev/null 2>&1 || { echo "test $t under perf failed"; continue; }
    python3 - "$work/calls-$t.csv" "$plain" "${inspected:-$plain}" "${opened:-$plain}" \
      "$work/profiles/suites/$t.yaml" <<'PY'
import re, sys
plain, inspected, opened = (float(x) for x in sys.argv[2:5])
# -I rows: time, count, unit, event, ...; the three events of one 200 ms
# in the order given (all, opens, inspected), each count for its own 200 ms.
rows = [l.split(",") for l in open(sys.argv[1]) if l[:1].isdigit() or l[:1] == " "]
by_time = {}
for r in rows:
    by_time.setdefault(float(r[0]), []).append(int(r[1]) if r[1].strip().isdigit() else 0)
best, last = (0.0, 0, 0, 0), 0.0
for t in sorted(by_time):
    c = by_time[t]
    if len(c) == 3:
        a, o, i = c
        share = ((a - o - i) * plain + i * inspected + o * opened) / (t - last)
        best = max(best, (share, a / (t - last), o / (t - last), i / (t - last)))
    last = t
test = re.search(r"\{profile: ([\w-]+)(.*)\}", open(sys.argv[5]).read().splitlines()[-1])
share, a, o, i = best
print(f"  {(test.group(1) + test.group(2))[:60]:<60} {a:>9,.0f} calls/s ({o:>7,.0f} opens, {i:>7,.0f} inspected)  {share * 100:.2f} %")
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
wanted setup && paired true u 20 | { read -r a b n _; python3 -c "a, b, n = $a, $b, $n; print(f'a trial of /bin/true ({n} trials a side): confined {a * 1e3:.3f} ms, unconfined {b * 1e3:.3f} ms: {(a - b) * 1e3:.3f} ms more')"; }
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
if wanted setup; then
  python3 -c "import statistics; v = [$(IFS=,; echo "${slopes[*]}")]; print(f'set-up per confined command (engine wall time, 20 vs 60 trials, median of {len(v)} rounds): {statistics.median(v) * 1e3:.2f} ms')"
fi
