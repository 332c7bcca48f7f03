#!/usr/bin/env bash
# Fuzzes every parser of outside input for SECONDS each (default 60):
#   scripts/fuzz.sh [SECONDS]
# Installs the nightly toolchain and cargo-fuzz when missing (stable stays
# the default toolchain: only this script says `+nightly`), builds the
# targets in fuzz/ (their own workspace), runs each with libFuzzer on its
# corpus (fuzz/corpus/T, not committed, grown by runs) and its seeds
# (fuzz/seeds/T, committed), and prints executions per second and crashes
# per target. A crash's input is kept in fuzz/artifacts/T/; turn it into a
# regular test (tests/integration/robustness.rs) and fix it.
#
# FUZZ_TARGETS="profile extract" limits the targets; FUZZ_SANITIZER=address
# builds with AddressSanitizer (default none: engine's own code is safe
# Rust, and ASan halves the throughput).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
case $secs in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "installing the nightly toolchain (for cargo-fuzz only; stable stays the default)" >&2
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz" >&2
  cargo +stable install cargo-fuzz --locked
fi

cd fuzz
export CARGO_TARGET_DIR="$PWD/target"
san=${FUZZ_SANITIZER:-none}
# -a: debug assertions on (integer overflow is a crash, as in a debug build).
build=(+nightly fuzz build -a -s "$san")
echo "building the fuzz targets (sanitizer: $san)..." >&2
nice -n 10 cargo "${build[@]}" >&2
targets=${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}

results=()
total_crashes=0
start=$(date +%s)
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  before=$(find "artifacts/$t" -type f | wc -l)
  log=$(mktemp)
  set +e
  nice -n 10 cargo +nightly fuzz run -a -s "$san" "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  after=$(find "artifacts/$t" -type f | wc -l)
  crashes=$((after - before))
  runs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  eps=$(grep -h 'stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s + 0}')
  rss=$(grep -h 'stat::peak_rss_mb' "$log" | awk '{if ($2 > m) m = $2} END {print m + 0}')
  if [ "$crashes" -gt 0 ] || { [ "$rc" -ne 0 ] && [ "$runs" = 0 ]; }; then
    echo "--- $t (exit $rc): last lines of its log ---" >&2
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -20 >&2 || tail -20 "$log" >&2
    [ "$crashes" -gt 0 ] || crashes=1
  fi
  total_crashes=$((total_crashes + crashes))
  results+=("$(printf '%-22s %10s %12s %9s %8s' "$t" "$runs" "$eps" "$rss" "$crashes")")
  rm -f "$log"
done

printf '\n%-22s %10s %12s %9s %8s\n' target executions 'exec/s' 'rss MiB' crashes
printf '%s\n' "${results[@]}"
echo "total: $(($(date +%s) - start)) s, $total_crashes crash(es); inputs that crashed are in fuzz/artifacts/"
[ "$total_crashes" -eq 0 ]
