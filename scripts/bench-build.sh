#!/usr/bin/env bash
# What the crate layout costs a person changing engine (issue 56): the time
# of an incremental `cargo build` and `cargo test --no-run` after touching one
# report file, one runner file and one operations file, medians of RUNS, for this checkout and,
# with --against REV, for REV in a worktree of its own (its own target
# folder, built once before timing), side by side in one invocation.
# With --cold it also times a cold release build of each (about 8.5 minutes
# each on 2 cores). Prints the medians and the ratios this / REV.
# Usage: scripts/bench-build.sh [--against REV] [--runs N] [--cold]
set -euo pipefail
cd "$(dirname "$0")/.."
against="" runs=3 cold=0
while (($#)); do
  case "$1" in
    --against) against=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cold) cold=1; shift ;;
    *) echo "usage: $0 [--against REV] [--runs N] [--cold]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'git worktree remove --force "$work/tree" 2>/dev/null || true; rm -rf "$work"' EXIT

# The file of a module, wherever the layout of that revision puts it.
find_file() { # DIR REL...
  local dir=$1; shift
  for rel in "$@"; do [ -f "$dir/$rel" ] && { echo "$dir/$rel"; return; }; done
  echo "none of $* under $dir" >&2; exit 1
}

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m}'; }

# Seconds of `cargo ARGS` after touching FILE, RUNS times; the median.
timed() { # DIR TARGET FILE ARGS...
  local dir=$1 target=$2 file=$3; shift 3
  for _ in $(seq "$runs"); do
    touch "$file"
    local t0; t0=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR=$target cargo "$@" --quiet >/dev/null 2>&1)
    echo "$(date +%s.%N) - $t0" | bc
  done | median
}

measure() { # NAME DIR TARGET
  local name=$1 dir=$2 target=$3
  if [ "$cold" = 1 ]; then
    rm -rf "$target/release"
    local t0; t0=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR=$target cargo build --release --quiet)
    printf "%.1f\n" "$(echo "$(date +%s.%N) - $t0" | bc)" > "$work/$name.cold"
  fi
  (cd "$dir" && CARGO_TARGET_DIR=$target cargo build --quiet && CARGO_TARGET_DIR=$target cargo test --no-run --quiet 2>/dev/null)
  local report runner ops
  report=$(find_file "$dir" crates/engine-core/src/report/csv.rs engine/src/report/csv.rs)
  runner=$(find_file "$dir" crates/engine-core/src/runner/trials.rs engine/src/runner/trials.rs)
  ops=$(find_file "$dir" crates/engine-ops/src/result.rs engine/src/ops/result.rs)
  timed "$dir" "$target" "$report" build > "$work/$name.build-report"
  timed "$dir" "$target" "$ops" build > "$work/$name.build-ops"
  timed "$dir" "$target" "$runner" build > "$work/$name.build-runner"
  timed "$dir" "$target" "$report" test --no-run > "$work/$name.test-report"
  timed "$dir" "$target" "$runner" test --no-run > "$work/$name.test-runner"
  touch "$report" "$runner" "$ops"
  (cd "$dir" && CARGO_TARGET_DIR=$target cargo build --quiet)
}

names=(this)
measure this "$PWD" "${CARGO_TARGET_DIR:-$PWD/target}"
if [ -n "$against" ]; then
  git worktree add --quiet --detach "$work/tree" "$against"
  measure against "$work/tree" "$work/target"
  names+=(against)
fi
printf '%-44s' ""; for n in "${names[@]}"; do printf '%12s' "$n"; done
[ -n "$against" ] && printf '%12s' "ratio"
echo
rows=(build-report build-runner build-ops test-report test-runner)
[ "$cold" = 1 ] && rows+=(cold)
declare -A label=(
  [build-report]="cargo build, report/csv.rs touched, s"
  [build-runner]="cargo build, runner/trials.rs touched, s"
  [build-ops]="cargo build, ops/result.rs touched, s"
  [test-report]="cargo test --no-run, report file touched, s"
  [test-runner]="cargo test --no-run, runner file touched, s"
  [cold]="cold release build, s"
)
for r in "${rows[@]}"; do
  printf '%-44s' "${label[$r]}"
  for n in "${names[@]}"; do printf '%12s' "$(cat "$work/$n.$r")"; done
  [ -n "$against" ] && printf '%12.2f' "$(echo "$(cat "$work/this.$r") / $(cat "$work/against.$r")" | bc -l)"
  echo
done
echo "(medians of $runs; lower is better; the same machine, one after the other)"
