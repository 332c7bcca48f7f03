#!/usr/bin/env bash
# Kills engine with SIGKILL at random moments, N times, and checks that
# `engine recover` puts everything back:
#   scripts/fault-inject.sh [N] (default 100; as root)
# Each run is one of four kinds, in turn: a scheduler sweep (with a queue
# setting) on a loop device this script made, a file-system sweep on a loop
# device engine makes, a plain run saving a result after every test, and an
# install that downloads and unpacks an archive from a local HTTP server
# (python3 -m http.server on 127.0.0.1). Tests are tiny (a shell that
# sleeps 50 ms) and start a server step (`sleep`), so kills land in trials,
# sweeps' state changes, result writes, server starts, downloads and
# extractions. After each kill: `engine recover`, then a check that the
# scheduler, queue settings, mounts, loop devices, processes and temporary
# files are as before, and that every result file parses and holds every
# test the killed run reported finished. Prints the figures at the end;
# exits 1 if anything was left changed or lost.
#
# ENGINE=path/to/engine uses that binary (default: a debug build).
# FI_SEED=n fixes the random kill times.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}
case $N in '' | *[!0-9]*) echo "usage: scripts/fault-inject.sh [N]" >&2; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then
  echo "fault-inject.sh needs root (loop devices, schedulers, mounts)" >&2
  exit 1
fi
RANDOM=${FI_SEED:-$$}
if [ -z "${ENGINE:-}" ]; then
  cargo build -q -p engine
  ENGINE="${CARGO_TARGET_DIR:-$PWD/target}/debug/engine"
fi
ENGINE=$(realpath "$ENGINE")

work=$(mktemp -d /var/tmp/engine-fi.XXXXXX)
work=$(realpath "$work")
# Its own machine-wide lock: the test suite runs this next to other engines.
export ENGINE_HOME="$work/home" ENGINE_PROFILE_PATH="$work/profiles" NO_COLOR=1 COLUMNS=100 ENGINE_MACHINE_LOCK="$work/machine.lock"
unset XDG_DATA_HOME ENGINE_DOWNLOAD_CACHE
mkdir -p "$ENGINE_HOME" "$work/profiles/test-profiles" "$work/target" "$work/loop" "$work/mnt" "$work/www" "$work/logs"

dev="" srv=""
cleanup() {
  set +e
  [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
  # Whatever is still there (a failed check) goes, newest first.
  ENGINE_HOME="$work/home" "$ENGINE" recover >/dev/null 2>&1
  findmnt -rn -o TARGET | grep -F "$work/" | sort -r | while read -r m; do umount -l "$m"; done
  mountpoint -q "$work/mnt" && umount -l "$work/mnt"
  losetup -a | grep -F "$work/" | cut -d: -f1 | while read -r d; do losetup -d "$d"; done
  rm -rf "$work"
}
trap cleanup EXIT

# The scheduler sweep's device: ext4 on a loop device over a sparse file.
truncate -s 64M "$work/sched.img"
dev=$(losetup --find --show "$work/sched.img")
mkfs.ext4 -q -F "$dev"
mount "$dev" "$work/mnt"
q=/sys/block/$(basename "$dev")/queue

# The download: 4 MB that do not compress, and a value, in a .tar.gz.
mkdir -p "$work/pkg/pkg"
head -c 4000000 /dev/urandom >"$work/pkg/pkg/noise.bin"
echo "value: 7" >"$work/pkg/pkg/value.txt"
tar -C "$work/pkg" -czf "$work/www/pkg.tar.gz" pkg
size=$(stat -c %s "$work/www/pkg.tar.gz")
sha=$(sha256sum "$work/www/pkg.tar.gz" | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" "$port" >"$work/logs/http.log" 2>&1 &
srv=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/pkg.tar.gz" && break; sleep 0.1; done

mkdir -p "$work/profiles/test-profiles/fi-tiny" "$work/profiles/test-profiles/fi-install"
cat >"$work/profiles/test-profiles/fi-tiny/profile.yaml" <<'EOF'
id: fi-tiny
version: 1.0.0
title: Fault injection
test_type: other
options:
  - id: v
    name: Value
    entries:
      - {label: V1, value: "1"}
      - {label: V2, value: "2"}
      - {label: V3, value: "3"}
      - {label: V4, value: "4"}
executor:
  external:
    program: sh
    args: ["-c", "echo data > f; sleep 0.05; echo value: {{v}}"]
    pre_test:
      - server:
          name: idle
          program: sleep
          args: ["86399"]
          ready: {command: ["true"]}
results:
  - {id: number, unit: Items, proportion: HIB}
parsers:
  - {result: number, regex: 'value: (?P<value>[0-9.]+)'}
EOF
cat >"$work/profiles/test-profiles/fi-install/profile.yaml" <<EOF
id: fi-install
version: 1.0.0
title: Fault injection install
test_type: other
install:
  downloads:
    - file: pkg.tar.gz
      size: $size
      sha256: $sha
      insecure: true
      urls: [http://127.0.0.1:$port/pkg.tar.gz]
executor:
  external:
    program: cat
    args: ["{{install_dir}}/pkg/value.txt"]
results:
  - {id: number, unit: Items, proportion: HIB}
parsers:
  - {result: number, regex: 'value: (?P<value>[0-9.]+)'}
EOF

kinds=(sched fs result install)
command_of() { # kind, run number
  case $1 in
    sched) echo "benchmark fi-tiny -y --runs 1 --target-dir $work/mnt --scheduler all --set queue/read_ahead_kb=64 --save fi-$2" ;;
    fs) echo "benchmark fi-tiny -y --runs 1 --target-dir $work/target --device loop:48M --loop-dir $work/loop --filesystem ext4,ext2 --save fi-$2" ;;
    result) echo "benchmark fi-tiny -y --runs 2 --target-dir $work/target --save fi-$2" ;;
    install) echo "install fi-install --force" ;;
  esac
}

# What must be as before: the device's scheduler and queue settings, mounts
# and loop devices under $work, our servers' processes, temporary files.
state() {
  echo "scheduler: $(cat "$q/scheduler")"
  for a in read_ahead_kb nr_requests; do echo "$a: $(cat "$q/$a")"; done
  for f in "$q"/iosched/*; do [ -f "$f" ] && echo "iosched/$(basename "$f"): $(cat "$f" 2>/dev/null)"; done
  findmnt -rn -o TARGET,SOURCE | grep -F "$work/" | sort | sed 's/^/mount: /' || true
  losetup -a | grep -F "$work/" | sed 's/^[^:]*: *\[[^]]*\]:[^(]*//; s/^/loop: /' | sort || true
  for p in $(pgrep -x sleep || true); do
    grep -qx 86399 <(tr '\0' '\n' 2>/dev/null <"/proc/$p/cmdline") && echo "server process: sleep 86399 (pid $p)"
  done
  kill -0 "$srv" 2>/dev/null && echo "http server: running"
  find "$work/home" "$work/target" "$work/mnt" "$work/loop" \
    \( -name '.tmp*' -o -name 'engine-*' -o -name '*.part' -o -name '*.img' \) -print 2>/dev/null | sed 's/^/file: /' | sort || true
  ls "$work/home/journal" 2>/dev/null | sed 's/^/journal: /' || true
}

# Every result file parses (as JSON and as engine reads it) and holds at
# least as many (test, identifier) values as the run reported finished.
check_results() { # log of the killed run, its result name
  local log=$1 name=$2 done_n have
  for f in "$work"/home/results/*/result.json; do
    [ -f "$f" ] || continue
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" || return 1
    "$ENGINE" result show "$(basename "$(dirname "$f")")" --format json >/dev/null 2>&1 || return 1
  done
  # Engine prints a test's result block on stdout once it is saved.
  done_n=$(grep -c '^Fault injection' "$log.out" || true)
  [ -f "$work/home/results/$name/result.json" ] || { [ "$done_n" = 0 ] && return 0; return 1; }
  have=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print(sum(len(r["entries"]) for r in f["results"]))' \
    "$work/home/results/$name/result.json")
  [ "$have" -ge "$done_n" ]
}

# Calibration: one run of each kind to the end, for how long each takes.
declare -A dur
before=$(state)
for k in "${kinds[@]}"; do
  t0=$(date +%s%N)
  # shellcheck disable=SC2046
  if ! "$ENGINE" $(command_of "$k" "cal-$k") >"$work/logs/cal-$k.log" 2>&1; then
    echo "calibration run ($k) failed:" >&2
    tail -20 "$work/logs/cal-$k.log" >&2
    exit 1
  fi
  dur[$k]=$((($(date +%s%N) - t0) / 1000000))
  echo "calibration: $k takes ${dur[$k]} ms" >&2
done
after=$(state)
if [ "$before" != "$after" ]; then
  echo "a run that finished left the state changed:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi

kills=0 restored=0 results_ok=0 results_n=0 leftovers=0 recover_failed=0
start=$(date +%s)
for i in $(seq 1 "$N"); do
  k=${kinds[$((i % 4))]}
  [ "$k" = install ] && rm -rf "$work/home/cache/downloads" "$work/home/installed"
  before=$(state)
  # A kill moment uniform over the run's calibrated length (at least 20 ms).
  ms=$((20 + (RANDOM * 32768 + RANDOM) % (dur[$k] > 20 ? dur[$k] : 21)))
  log="$work/logs/run-$i.log"
  # shellcheck disable=SC2046
  "$ENGINE" $(command_of "$k" "$i") >"$log.out" 2>"$log" &
  pid=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  if kill -KILL "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null || true
  if ! "$ENGINE" recover >"$work/logs/recover-$i.log" 2>&1; then
    recover_failed=$((recover_failed + 1))
    echo "run $i ($k, killed at $ms ms): engine recover failed:" >&2
    cat "$work/logs/recover-$i.log" >&2
  fi
  # An unfinished download is kept on purpose (the next install resumes it):
  # finish the install, which must leave no partial file.
  if [ "$k" = install ]; then
    "$ENGINE" install fi-install >>"$work/logs/recover-$i.log" 2>&1 || echo "run $i: the install after the kill failed" >&2
    rm -rf "$work/home/cache/downloads" "$work/home/installed"
  fi
  # Servers get their parent-death signal and recover stops the rest; allow them a moment.
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ "$(state)" = "$before" ] && break; sleep 0.1; done
  after=$(state)
  if [ "$after" = "$before" ]; then
    restored=$((restored + 1))
  else
    echo "run $i ($k, killed at $ms ms): left changed:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    leftovers=$((leftovers + $(diff <(echo "$before") <(echo "$after") | grep -c '^>' || true)))
  fi
  if [ "$k" != install ]; then
    results_n=$((results_n + 1))
    if check_results "$log" "fi-$i"; then
      results_ok=$((results_ok + 1))
    else
      echo "run $i ($k, killed at $ms ms): a result file is damaged or lost a finished test" >&2
    fi
  fi
  # Each run starts from a clean state: what a check found stays counted.
  [ "$after" = "$before" ] || "$ENGINE" recover >/dev/null 2>&1 || true
done
secs=$(($(date +%s) - start))

pct() { if [ "$2" = 0 ]; then echo "n/a"; else echo "$((100 * $1 / $2)) %"; fi; }
echo
echo "fault injection: $N runs in ${secs} s (calibrated lengths: sched ${dur[sched]} ms, fs ${dur[fs]} ms, result ${dur[result]} ms, install ${dur[install]} ms)"
echo "kills:                $kills"
echo "states restored:      $restored / $N ($(pct "$restored" "$N"))"
echo "result files intact:  $results_ok / $results_n ($(pct "$results_ok" "$results_n"))"
echo "leftovers:            $leftovers"
echo "recover failures:     $recover_failed"
[ "$restored" = "$N" ] && [ "$results_ok" = "$results_n" ] && [ "$leftovers" = 0 ] && [ "$recover_failed" = 0 ]
