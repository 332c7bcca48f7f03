#!/usr/bin/env bash
# Imports a PTS composite.xml of N results (the fixture's results repeated
# with other descriptions, half of them matching engine's fs-mark tests) and
# prints the median wall time of `engine result import` against the goal (1 s).
# Usage: scripts/bench-import.sh [RESULTS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3000} runs=${2:-5}
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - tests/fixtures/pts/loop-fsmark.composite.xml "$work/big.xml" "$n" <<'PY'
import re, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(src).read()
results = re.findall(r"<Result>.*?</Result>", text, re.S)
head = text[: text.index("<Result>")]
tail = text[text.rindex("</Result>") + len("</Result>"):]
body = []
for i in range(n):
    r = results[i % len(results)]
    if i >= len(results):
        # Other descriptions: half still match an fs-mark entry, half match nothing.
        label = "100 Files, 1MB Size" if i % 2 else f"Run {i}"
        r = re.sub(r"<Description>.*?</Description>", f"<Description>Test: {label}</Description>", r, flags=re.S)
    body.append(r)
open(out, "w").write(head + "\n".join(body) + tail)
PY
echo "== import a composite.xml of $n results ($runs runs)"
times=()
for i in $(seq "$runs"); do
  home=$(mktemp -d)
  t0=$(date +%s%N)
  ENGINE_HOME=$home "$ENGINE" result import "$work/big.xml" --save big >/dev/null 2>&1
  t1=$(date +%s%N)
  rm -rf "$home"
  times+=($(( (t1 - t0) / 1000000 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "import: median ${median} ms over $runs runs (goal ≤ 1000 ms); runs: ${times[*]}"
