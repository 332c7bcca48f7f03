#!/usr/bin/env bash
# Measures a full system-information capture (`engine system-info`, what every
# new identifier records) and says what dominates. Goal: <= 100 ms here.
# PTS's `phoronix-test-suite system-info` is not packaged for Debian 12; when
# it is on PATH it is measured in the same hyperfine run.
# Usage: scripts/bench-sysinfo.sh [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-/tmp}
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)"; exit 1; }
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmds=("$ENGINE system-info --target-dir $target" "$ENGINE system-info --target-dir $target --json")
if command -v phoronix-test-suite >/dev/null; then cmds+=("phoronix-test-suite system-info"); fi
hyperfine -N --warmup 3 --runs 30 --export-json "$work/si.json" --style none "${cmds[@]}" >/dev/null
python3 - "$work/si.json" <<'PY'
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"  {statistics.median(r['times'])*1000:7.1f} ms  median of {len(r['times'])}  {r['command']}")
PY
echo "== where the time goes (one capture):"
"$ENGINE" system-info --target-dir "$target" --timings 2>&1 >/dev/null | sed 's/^/  /'
