#!/usr/bin/env bash
# Does a second run repeat the answer? The seeds' scheduler experiment at
# small size — io 4 KB random read, io 2 MB sequential write, files,
# embedded SQLite — under none / mq-deadline / bfq on a loop device this
# script makes (ext4 on a 1 GiB file), run RUNS times (default 3)
# independently, once with the trials interleaved across the schedulers and
# once in blocks (--no-interleave), all in one invocation. For each mode it
# prints:
#   - verdicts agree: the share of comparisons (result × scheduler against
#     none) whose verdict (better / worse / no significant difference) is
#     the same in every run;
#   - ratios inside: the share of (run, other run) pairs where one run's
#     ratio of means falls inside the other's 95 % interval (Fieller). Even
#     on a perfectly steady machine this is only about 83 % (two estimates
#     of one ratio differ by √2 of their standard error on average), so the
#     script also prints the share of pairs whose intervals overlap (about
#     99.5 % on a steady machine).
# Goals (issue 24): verdicts agree ≥ 90 % with interleaving; intervals
# overlap ≥ 95 %. Needs root (loop device, schedulers); leaves nothing behind.
# Usage: sudo scripts/bench-replication.sh [RUNS] [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3} budget=${2:-4s}
[ "$(id -u)" = 0 ] || { echo "needs root: it makes a loop device and switches its scheduler" >&2; exit 2; }
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
dev=""
cleanup() {
  umount "$work/mnt" 2>/dev/null || true
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
truncate -s 1G "$work/disk.img"
dev=$(losetup --find --show "$work/disk.img")
mkfs.ext4 -q -F "$dev"
mkdir -p "$work/mnt" "$work/profiles/suites"
mount "$dev" "$work/mnt"
cat > "$work/profiles/suites/replication.yaml" <<'YAML'
title: Replication
description: The seeds' scheduler experiment at small size.
tests:
  - profile: io
    options: {type: Random Read, engine: IO_uring, direct: "Yes", block_size: 4KB, depth: "16", jobs: "1", file_size: 32 MiB, runtime: 1 Second}
  - profile: io
    options: {type: Sequential Write, engine: IO_uring, direct: "Yes", block_size: 2MB, depth: "16", jobs: "1", file_size: 32 MiB, runtime: 1 Second}
  - profile: files
    options: {test: "100 Files, 1MB Size"}
  - profile: sqlite-embedded
    options: {inserts: "100"}
YAML
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$work/profiles
echo "loop device $dev; $runs runs per mode, budget $budget per test and state"
for mode in interleave no-interleave; do
  for i in $(seq "$runs"); do
    t0=$(date +%s)
    "$ENGINE" benchmark suite/replication -y --target-dir "$work/mnt" --scheduler none,mq-deadline,bfq \
      --"$mode" --budget "$budget" --save "$mode-$i" --identifier rep >/dev/null 2>"$work/$mode-$i.err" \
      || { echo "run $mode $i failed:"; tail -5 "$work/$mode-$i.err"; exit 1; }
    "$ENGINE" result show "$mode-$i" --format json --baseline "rep: NONE" > "$work/$mode-$i.json"
    echo "$mode run $i: $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$work" "$runs" <<'PY'
import json, sys, itertools
work, runs = sys.argv[1], int(sys.argv[2])
def load(mode):
    out = []
    for i in range(1, runs + 1):
        f = json.load(open(f"{work}/{mode}-{i}.json"))
        out.append({(c["test"], c["result"], c["identifier"]): c for c in f.get("comparisons", [])})
    return out
print()
rows = {}
for mode in ["interleave", "no-interleave"]:
    runs_ = load(mode)
    keys = set.intersection(*(set(r) for r in runs_))
    agree = sum(len({r[k]["verdict"] for r in runs_}) == 1 for k in keys)
    inside = total = overlap = 0
    for a, b in itertools.permutations(runs_, 2):
        for k in keys:
            ci, ca = b[k].get("ratio_ci"), a[k].get("ratio_ci")
            if ci is None or ca is None:
                continue
            total += 1
            inside += ci[0] <= a[k]["ratio"] <= ci[1]
            overlap += ca[0] <= ci[1] and ci[0] <= ca[1]
    changed = sum(any(r[k]["verdict"] in ("better", "worse") for r in runs_) for k in keys)
    rows[mode] = (agree, len(keys), inside, total, changed, overlap)
    print(f"{mode}: comparisons whose verdict differs between runs")
    for k in sorted(keys):
        if len({r[k]["verdict"] for r in runs_}) > 1:
            said = ", ".join(f'{r[k]["verdict"]} {r[k]["ratio"]:.3f}' for r in runs_)
            print(f"  {k[0][:40]} {k[1]} {k[2]}: {said}")
def pct(a, b):
    return f"{100 * a / b:.0f} % ({a}/{b})" if b else "-"
i, n = rows["interleave"], rows["no-interleave"]
print()
print(f"{'':28}{'interleaved':>18}{'in blocks':>18}")
print(f"{'verdicts agree in all runs':28}{pct(i[0], i[1]):>18}{pct(n[0], n[1]):>18}")
print(f"{'ratio inside other CI':28}{pct(i[2], i[3]):>18}{pct(n[2], n[3]):>18}")
print(f"{'intervals overlap':28}{pct(i[5], i[3]):>18}{pct(n[5], n[3]):>18}")
print(f"{'called changed in any run':28}{i[4]:>18}{n[4]:>18}")
print("goals: verdicts agree >= 90 % interleaved; intervals overlap >= 95 % (a steady machine: overlap about 99.5 %, ratios inside about 83 %)")
PY
