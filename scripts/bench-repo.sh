#!/usr/bin/env bash
# Measures `engine list profiles` with three added profile repositories of
# 500 profiles each (README, "Performance"; target ≤ 20 ms): publishes them
# into folders, adds them (signed), and prints the median of RUNS runs
# (hyperfine when installed, else a loop with `date +%s%N`).
# Usage: scripts/bench-repo.sh [PROFILES_PER_REPO] [RUNS]   (default 500, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
per=${1:-500}
runs=${2:-20}
cargo build --release -q -p engine
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
engine=$target_dir/release/engine
work=$(mktemp -d /var/tmp/bench-repo.XXXXXX)
trap 'rm -rf "$work"' EXIT
export ENGINE_HOME=$work/home
"$engine" repo keygen --out "$work/key" >/dev/null
for r in alpha beta gamma; do
  src=$work/src-$r
  for i in $(seq 1 "$per"); do
    d=$src/test-profiles/$r-p$i
    mkdir -p "$d"
    cat > "$d/profile.yaml" <<YAML
id: $r-p$i
version: 1.$((i % 7)).0
title: Profile $i of $r
test_type: disk
executor:
  external:
    program: sh
    args: ["-c", "echo value: $i"]
results:
  - {id: number, unit: Items/s, proportion: HIB}
parsers:
  - {result: number, regex: 'value: (?P<value>[0-9.]+)'}
YAML
  done
  "$engine" repo publish "$src" --out "$work/out-$r" --key "$work/key.key" >/dev/null
  "$engine" repo add "$r" "$work/out-$r" --key "$work/key.pub" >/dev/null
done
n=$("$engine" list profiles | wc -l)
echo "engine list profiles: $n rows ($((3 * per)) from three repositories)"
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/h.json" "$engine list profiles" >/dev/null
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(f'median {r[\"median\"]*1000:.1f} ms (mean {r[\"mean\"]*1000:.1f} ms, min {r[\"min\"]*1000:.1f} ms, {len(r[\"times\"])} runs)')" "$work/h.json"
else
  times=()
  for _ in $(seq 1 "$runs"); do
    s=$(date +%s%N); "$engine" list profiles >/dev/null; e=$(date +%s%N)
    times+=($(((e - s) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median %.1f ms (%d runs)\n", a[int((NR+1)/2)]/1000, NR}'
fi
