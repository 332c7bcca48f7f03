#!/usr/bin/env bash
# Times `engine result history` over a store of RESULTS saved results with
# TESTS results each (default 1,000 × 50; issue goal: ≤ 2 s on a 2-core
# machine), medians of 3, text and CSV. The store is generated: one
# identifier per result, an hour apart, tagged kernel=6.N, each result's
# values 3 % noise around a level that steps up or down at a point of its own.
# Usage: scripts/bench-history.sh [RESULTS] [TESTS]
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${1:-1000}
TESTS=${2:-50}
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ENGINE_HOME=$work/home
python3 - "$ENGINE_HOME/results" "$RESULTS" "$TESTS" <<'PY'
import json, os, random, sys, datetime
root, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
steps = [(rng.randrange(n // 4, 3 * n // 4), rng.choice([0.9, 1.1])) for _ in range(m)]
t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
for i in range(n):
    when = (t0 + datetime.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    results = []
    for k in range(m):
        level = 100.0 * (steps[k][1] if i >= steps[k][0] else 1.0)
        trials = [level * (1 + 0.03 * rng.gauss(0, 1)) for _ in range(5)]
        mean = sum(trials) / 5
        s = sorted(trials)
        results.append({
            "test": f"synthetic-1.0-{k:02}", "profile": "synthetic", "profile_version": "1.0.0",
            "result": "rate", "title": "Synthetic", "description": f"Case {k}", "options": [],
            "unit": "MB/s", "proportion": "HIB",
            "entries": [{"identifier": "host1", "value": mean, "trials": trials, "n": 5,
                         "min": s[0], "max": s[-1], "median": s[2], "timestamp": when}],
        })
    f = {"schema_version": 1, "title": f"nightly-{i:04}",
         "systems": [{"identifier": "host1", "started": when, "engine_version": "0.1.0",
                      "tags": {"kernel": f"6.{i // 100}"}}],
         "results": results}
    d = os.path.join(root, f"nightly-{i:04}")
    os.makedirs(d)
    with open(os.path.join(d, "result.json"), "w") as out:
        json.dump(f, out)
PY
du -sh "$ENGINE_HOME/results" | awk -v n="$RESULTS" -v m="$TESTS" '{print "store: " n " results x " m " results each, " $1}'
time_it() {
  local best=()
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$ENGINE" result history "$@" >/dev/null
    e=$(date +%s.%N)
    best+=("$(echo "$e - $s" | bc)")
  done
  printf '%s\n' "${best[@]}" | sort -n | sed -n 2p
}
text=$(time_it)
csv=$(time_it --format csv)
echo "engine result history (text): median of 3 = ${text} s   (goal ≤ 2 s)"
echo "engine result history --format csv: median of 3 = ${csv} s"
"$ENGINE" result history | tail -n 2
