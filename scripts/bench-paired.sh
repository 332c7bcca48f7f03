#!/usr/bin/env bash
# Decisions, not "undecided" (issue 55): the README's three-scheduler io
# comparison on a loop device engine makes (ext4), one interleaved run in
# balanced rounds that stops on the verdict, then the same trials judged
# twice in one invocation:
#   paired    as engine judges them now (per-round log ratios, a t interval);
#   unpaired  the same numbers with the rounds' pairing removed (Welch and
#             Fieller on two samples, as before issue 55).
# It prints the share of comparisons (result x state against the baseline)
# that are decided — better, worse or equivalent within +-2 % — each way,
# their ratio, the run's wall time and rounds, and the machine's noise split
# into its between-round part (the level every state shares in a round,
# which pairing cancels) and its within-round part (what is left).
# Goal (issue 55): >= 80 % decided. Needs root; leaves nothing behind.
# Usage: sudo [KEEP=FILE] [DEVICE=loop:SIZE] [TEST=io|suite/NAME] [SCHEDULERS=a,b]
#          scripts/bench-paired.sh [BUDGET] [OPTIONS...]
# (issue 55's second goal: TEST=suite/disk-quick SCHEDULERS=none,kyber
#  DEVICE=loop:2G scripts/bench-paired.sh 18s — about 15 minutes)
#   default: 2m, io 4 KB random read, 256 MiB file, 2 s trials.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-2m}
shift || true
opts=("$@")
test=${TEST:-io}
[ ${#opts[@]} -gt 0 ] || [ "$test" != io ] || opts=(-o type=randread -o block_size=4KB -o file_size=256MiB -o runtime=2s -o depth=16 -o jobs=1)
engine=${ENGINE:-target/release/engine}
[ -x "$engine" ] || cargo build --release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ENGINE_HOME=$work/home XDG_CONFIG_HOME=$work/config
start=$(date +%s.%N)
# engine runs in the background so a signal to this script reaches it and the
# work folder (its ENGINE_HOME, its journal) outlives its clean-up.
"$engine" benchmark "$test" -y ${opts[@]+"${opts[@]}"} --device "${DEVICE:-loop:1G}" --filesystem ext4 \
  --scheduler "${SCHEDULERS:-none,mq-deadline,kyber}" --budget "$budget" --monitor none --save paired >/dev/null 2>"$work/run.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid; exit 130' INT TERM
wait $pid || { cat "$work/run.log"; exit 1; }
trap - INT TERM
end=$(date +%s.%N)
file=$ENGINE_HOME/results/paired/result.json
# KEEP=PATH keeps the run's result file for a closer look.
[ -z "${KEEP:-}" ] || cp "$file" "$KEEP"
python3 scripts/unpair.py "$file" "$work/unpaired.json"
"$engine" result show paired --format csv >"$work/paired.csv"
"$engine" result show "$work/unpaired.json" --format csv >"$work/unpaired.csv"
python3 - "$work/paired.csv" "$work/unpaired.csv" "$file" "$start" "$end" <<'EOF'
import csv, json, math, sys, statistics as st
def decided(path):
    rows = [r for r in csv.DictReader(open(path)) if r.get("verdict") not in (None, "", "baseline")]
    yes = [r for r in rows if r["verdict"].startswith(("better", "worse", "equivalent"))]
    return len(yes), len(rows)
(p, n), (u, m) = decided(sys.argv[1]), decided(sys.argv[2])
f = json.load(open(sys.argv[3]))
rounds = max(len(e.get("trial_rounds", [])) for r in f["results"] for e in r["entries"])
# Noise of log values: between rounds (the round's mean over states) and
# within rounds (each value around its round's mean and its state's mean).
between, within = [], []
for r in f["results"]:
    es = [e for e in r["entries"] if len(e.get("trial_rounds", [])) == len(e["trials"]) and all(v > 0 for v in e["trials"])]
    if len(es) < 2:
        continue
    k = min(len(e["trials"]) for e in es)
    logs = [[math.log(e["trials"][j]) for j in range(k)] for e in es]
    state_mean = [st.mean(l) for l in logs]
    round_mean = [st.mean(l[j] - state_mean[i] for i, l in enumerate(logs)) for j in range(k)]
    if k > 2:
        between.append(st.stdev(round_mean))
        within.append(st.stdev([l[j] - state_mean[i] - round_mean[j] for i, l in enumerate(logs) for j in range(k)]))
took = float(sys.argv[5]) - float(sys.argv[4])
print(f"comparisons: {n} (results x states other than the baseline); {rounds} rounds at most; wall {took:.0f} s")
print(f"decided paired:   {p}/{n} = {100 * p / max(n, 1):.0f} %   (goal >= 80 %)")
print(f"decided unpaired: {u}/{m} = {100 * u / max(m, 1):.0f} %   (the same trials, Welch/Fieller)")
if between:
    print(f"noise (SD of log values, median over results): between rounds {100 * st.median(between):.1f} %, within a round {100 * st.median(within):.1f} %")
EOF
