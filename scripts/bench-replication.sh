#!/usr/bin/env bash
# Does a second run repeat the answer? The seeds' scheduler experiment at
# small size — io 4 KB random read, io 2 MB sequential write, files,
# embedded SQLite — under none / mq-deadline / kyber, each run on a fresh loop
# device engine makes (`--device loop:1G`, ext4), run RUNS times (default 3)
# independently in each mode, all in one invocation:
#   interleave  the schedulers alternate trial by trial on one file system;
#   setups      the same with `--setups 3`: three rounds, each making the
#               file system afresh (Kalibera & Jones's two levels);
#   blocks      each scheduler's trials in one block (--no-interleave).
# Each interleaved mode is read twice: as engine reads it (paired over
# rounds, issue 55) and as `MODE/unpaired`, the same trials with the rounds'
# pairing removed (Welch/Fieller, as before issue 55).
# For each mode it prints:
#   - verdicts agree: the share of comparisons (result × scheduler against
#     none) whose verdicts are compatible in every pair of runs — the same,
#     `equivalent`/`undecided` with each other, or one of them with a
#     direction when the two ratio intervals overlap;
#   - contradictions: better in one run, worse in another;
#   - ratio inside: the share of (run, other run) pairs where one run's
#     ratio falls inside the other's 95 % interval (about 83 % even on a
#     steady machine: two estimates of one ratio differ by √2 of their SE);
#   - coverage: the share of runs' intervals holding the ratio pooled over
#     all runs of the mode (nominal 95 %);
#   - decided: the share of comparisons better, worse or equivalent;
#   - its wall time, and the ratio to the interleaved mode's.
# Goals (issues 41, 55): 0 contradictions; coverage ≥ 90 % with set-ups and
# paired; agreement ≥ 90 %; set-ups within 1.5× the interleaved run's time;
# more decided paired than unpaired in the same budget.
# Needs root (loop devices, schedulers); leaves nothing behind.
# Usage: sudo scripts/bench-replication.sh [RUNS] [BUDGET] [MODES]
#   (MODES: a comma list, default interleave,setups,blocks)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3} budget=${2:-4s} modes=${3:-interleave,setups,blocks}
[ "$(id -u)" = 0 ] || { echo "needs root: it makes loop devices and switches their scheduler" >&2; exit 2; }
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/profiles/suites" "$work/loop" "$work/interleave" "$work/setups"
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
    options: {copies: "1 (engine quick: 3 x 100 inserts)"}
YAML
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$work/profiles
echo "$runs runs per mode ($modes), budget $budget per test and state, a fresh loop device each run"
IFS=, read -ra mode_list <<< "$modes"
all_modes=("${mode_list[@]}")
for mode in "${mode_list[@]}"; do
  case "$mode" in
    interleave) flags=(--interleave) ;;
    setups) flags=(--interleave --setups 3) ;;
    blocks) flags=(--no-interleave) ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  t0=$(date +%s)
  for i in $(seq "$runs"); do
    "$ENGINE" benchmark suite/replication -y --device loop:1G --loop-dir "$work/loop" \
      --scheduler none,mq-deadline,kyber "${flags[@]}" --budget "$budget" --save "$mode-$i" --identifier rep \
      >/dev/null 2>"$work/$mode-$i.err" \
      || { echo "run $mode $i failed:"; tail -5 "$work/$mode-$i.err"; exit 1; }
    base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["systems"][0]["identifier"])' \
      "$ENGINE_HOME/results/$mode-$i/result.json")
    "$ENGINE" result show "$mode-$i" --format json --baseline "$base" > "$work/$mode-$i.json"
    if [ "$mode" != blocks ]; then
      python3 scripts/unpair.py "$ENGINE_HOME/results/$mode-$i/result.json" "$work/$mode-$i.unpaired-result.json"
      "$ENGINE" result show "$work/$mode-$i.unpaired-result.json" --format json --baseline "$base" \
        > "$work/$mode/unpaired-$i.json" || { echo "result show of $mode $i unpaired failed"; exit 1; }
    fi
  done
  echo "$(( $(date +%s) - t0 ))" > "$work/$mode.seconds"
  echo "$mode: $runs runs in $(cat "$work/$mode.seconds") s"
  [ "$mode" = blocks ] || { cp "$work/$mode.seconds" "$work/$mode/unpaired.seconds"; all_modes+=("$mode/unpaired"); }
done
python3 - "$work" "$runs" "$(IFS=,; echo "${all_modes[*]}")" <<'PY'
import json, sys, itertools, math
work, runs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
DIRECTED = ("better", "worse")
def load(mode):
    out = []
    for i in range(1, runs + 1):
        name = f"{work}/{mode.split('/')[0]}/unpaired-{i}.json" if mode.endswith("/unpaired") else f"{work}/{mode}-{i}.json"
        f = json.load(open(name))
        # The identifiers name the loop device's size, the same every run.
        out.append({(c["test"], c["result"], c["identifier"]): c for c in f.get("comparisons", [])})
    return out
def overlap(a, b):
    ca, cb = a.get("ratio_ci"), b.get("ratio_ci")
    return ca is not None and cb is not None and ca[0] <= cb[1] and cb[0] <= ca[1]
def compatible(a, b):
    va, vb = a["verdict"], b["verdict"]
    if va == vb:
        return True
    if va in DIRECTED and vb in DIRECTED:
        return False
    if va not in DIRECTED and vb not in DIRECTED:
        return True
    return overlap(a, b)
rows = {}
for mode in modes:
    rs = load(mode)
    keys = sorted(set.intersection(*(set(r) for r in rs)))
    agree = sum(all(compatible(a[k], b[k]) for a, b in itertools.combinations(rs, 2)) for k in keys)
    contra = sum({"better", "worse"} <= {r[k]["verdict"] for r in rs} for k in keys)
    inside = total = 0
    for a, b in itertools.permutations(rs, 2):
        for k in keys:
            ci = b[k].get("ratio_ci")
            if ci is None or a[k].get("ratio_ci") is None:
                continue
            total += 1
            inside += ci[0] <= a[k]["ratio"] <= ci[1]
    cover = cn = 0
    for k in keys:
        pooled = math.exp(sum(math.log(r[k]["ratio"]) for r in rs) / len(rs))
        for r in rs:
            ci = r[k].get("ratio_ci")
            if ci is not None:
                cn += 1
                cover += ci[0] <= pooled <= ci[1]
    secs = int(open(f"{work}/{mode}.seconds").read())
    decided = sum(r[k]["verdict"] in DIRECTED + ("equivalent",) for r in rs for k in keys)
    rows[mode] = (agree, len(keys), contra, inside, total, cover, cn, secs, decided, len(keys) * len(rs))
    print(f"\n{mode}: comparisons whose verdicts are not compatible between runs")
    for k in keys:
        if not all(compatible(a[k], b[k]) for a, b in itertools.combinations(rs, 2)):
            said = ", ".join(f'{r[k]["verdict"]} {r[k]["ratio"]:.3f} {r[k].get("ratio_ci")}' for r in rs)
            print(f"  {k[0][:40]} {k[1]} {k[2]}: {said}")
def pct(a, b):
    return f"{100 * a / b:.0f} % ({a}/{b})" if b else "-"
print()
print(f"{'':28}" + "".join(f"{m:>21}" for m in modes))
print(f"{'verdicts agree':28}" + "".join(f"{pct(rows[m][0], rows[m][1]):>21}" for m in modes))
print(f"{'contradictions':28}" + "".join(f"{rows[m][2]:>21}" for m in modes))
print(f"{'ratio inside other CI':28}" + "".join(f"{pct(rows[m][3], rows[m][4]):>21}" for m in modes))
print(f"{'coverage of pooled ratio':28}" + "".join(f"{pct(rows[m][5], rows[m][6]):>21}" for m in modes))
base = rows.get("interleave", (0,) * 10)[7]
print(f"{'decided':28}" + "".join(f"{pct(rows[m][8], rows[m][9]):>21}" for m in modes))
print(f"{'wall time, s':28}" + "".join(f"{rows[m][7]:>21}" for m in modes))
if base:
    print(f"{'time / interleaved':28}" + "".join(f"{rows[m][7] / base:>18.2f}" for m in modes))
print("goals: 0 contradictions; coverage >= 90 % with set-ups and paired; agreement >= 90 %; set-ups <= 1.5x the interleaved time; paired decides more than unpaired")
PY
