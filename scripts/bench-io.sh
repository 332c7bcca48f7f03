#!/usr/bin/env bash
# The built-in `io` workload next to fio, alternating in one invocation on
# the same directory, and the built-in `files` workload next to fs_mark.
# Prints per scenario the median of each tool and the ratio engine / peer.
#
# Usage: scripts/bench-io.sh [DIR] [ROUNDS] [RUNTIME_S]
#        scripts/bench-io.sh --cpu-bound [ROUNDS] [RUNTIME_S]
#   DIR defaults to engine's default target directory; pass a loop device's
#   mount point to measure there. --cpu-bound (root) makes its own: ext4 on a
#   loop device backed by a file in /dev/shm, so the device costs little and
#   the submitting code's own cost shows (what a fast NVMe array looks like
#   to the CPU), and runs 4 KB random reads and writes at QD 1, 32 and 128,
#   io_uring and psync, 1 and 4 jobs. Needs fio and fs_mark
#   (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cpu_bound=""
if [ "${1:-}" = --cpu-bound ]; then
  shift
  [ "$(id -u)" = 0 ] || { echo "--cpu-bound needs root: it makes a loop device" >&2; exit 2; }
  cpu_bound=1
  set -- "" "$@"
fi
dir=${1:-${ENGINE_HOME:-$HOME/.local/share/engine}/scratch} rounds=${2:-3} runtime=${3:-10}
loopdev="" shm=""
if [ -n "$cpu_bound" ]; then
  shm=$(mktemp -d /dev/shm/bench-io.XXXXXX)
  truncate -s 3G "$shm/disk.img"
  loopdev=$(losetup --find --show "$shm/disk.img")
  mkfs.ext4 -q -F "$loopdev"
  dir=$(mktemp -d)
  mount "$loopdev" "$dir"
  export NOFILES=1
  : "${SCENARIOS:=randread 4k 1 1g IOPS io_uring 1;randread 4k 32 1g IOPS io_uring 1;randread 4k 128 1g IOPS io_uring 1;randwrite 4k 1 1g IOPS io_uring 1;randwrite 4k 32 1g IOPS io_uring 1;randwrite 4k 128 1g IOPS io_uring 1;randread 4k 32 256m IOPS io_uring 4;randread 4k 1 1g IOPS psync 1;randwrite 4k 1 1g IOPS psync 1;randread 4k 1 256m IOPS psync 4}"
fi
mkdir -p "$dir"
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  if [ -n "$loopdev" ]; then
    umount "$dir" 2>/dev/null || true
    losetup -d "$loopdev" 2>/dev/null || true
    rm -rf "$shm"; rmdir "$dir" 2>/dev/null || true
  fi
}
trap cleanup EXIT
export ENGINE_HOME=$work/home ENGINE_PROFILE_PATH=$work/profiles
mkdir -p "$work/profiles/test-profiles/bench-io" "$work/profiles/test-profiles/bench-files"
cat > "$work/profiles/test-profiles/bench-io/profile.yaml" <<YAML
id: bench-io
version: 1.0.0
title: io as fio runs it
test_type: disk
options:
  - {id: rw, name: rw, entries: [{label: x, value: x}]}
executor:
  builtin:
    workload: io
    config: {rw: "\${RW}", bs: "\${BS}", iodepth: "\${QD}", direct: "yes", size: "\${SIZE}", runtime: "${runtime}s", ramp_time: "1s", ioengine: "\${ENG}", numjobs: "\${JOBS}"}
results:
  - {id: iops, unit: IOPS, proportion: HIB}
  - {id: bandwidth, unit: MB/s, proportion: HIB}
  - {id: cpu_per_io, unit: µs, proportion: LIB}
parsers: []
YAML
cat > "$work/profiles/test-profiles/bench-files/profile.yaml" <<YAML
id: bench-files
version: 1.0.0
title: files as fs_mark runs it
test_type: disk
options:
  - {id: n, name: n, entries: [{label: x, value: x}]}
executor:
  builtin:
    workload: files
    config: {files: "\${FILES}", size: "1048576", fsync: "yes", threads: "1"}
results:
  - {id: files_per_second, unit: Files/s, proportion: HIB}
parsers: []
YAML
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# fio: prints "iops bw_MB/s cpu_us_per_io"
run_fio() {
  rm -rf "$dir/bench-fio"; mkdir -p "$dir/bench-fio"
  sync; sleep 1
  fio --name=b --directory="$dir/bench-fio" --rw="$1" --bs="$2" --iodepth="$3" --size="$4" \
    --ioengine="$5" --numjobs="$6" --group_reporting --direct=1 --runtime="$runtime" --ramp_time=1 --time_based \
    --output-format=json >"$work/fio.json"
  rm -rf "$dir/bench-fio"
  python3 - "$work/fio.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
side = j["read"] if j["read"]["io_bytes"] else j["write"]
ios = j["read"]["total_ios"] + j["write"]["total_ios"]
cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000
print(f'{side["iops"]:.1f} {side["bw_bytes"] / 1e6:.2f} {cpu_s * 1e6 / max(ios, 1):.3f}')
PY
}
run_engine() {
  sed -e "s/\${RW}/$1/" -e "s/\${BS}/$2/" -e "s/\${QD}/$3/" -e "s/\${SIZE}/$4/" -e "s/\${ENG}/$5/" -e "s/\${JOBS}/$6/" \
    "$work/profiles/test-profiles/bench-io/profile.yaml" > "$work/p.yaml"
  mkdir -p "$work/profiles/test-profiles/bio"
  sed 's/^id: bench-io/id: bio/' "$work/p.yaml" > "$work/profiles/test-profiles/bio/profile.yaml"
  rm -rf "$ENGINE_HOME/results/e"
  sync; sleep 1
  if ! "$ENGINE" benchmark bio -y --runs 1 --target-dir "$dir" --save e >"$work/engine.log" 2>&1; then
    echo "engine failed:" >&2; tail -5 "$work/engine.log" >&2; exit 1
  fi
  python3 - "$ENGINE_HOME/results/e/result.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
v = {r["result"]: r["entries"][0]["value"] for r in f["results"]}
print(f'{v["iops"]:.1f} {v["bandwidth"]:.2f} {v["cpu_per_io"]:.3f}')
PY
}
echo "== io vs fio 3.33 on $dir ($(findmnt -no FSTYPE,SOURCE -T "$dir" | tr -s ' ')), ${runtime}s each after a 1s ramp, $rounds rounds, alternating"
printf '%-34s %12s %12s %7s   %10s %10s %7s\n' scenario "fio" "engine io" ratio "fio µs/IO" "io µs/IO" ratio
# SCENARIOS="rw bs depth size unit [engine jobs];…" picks others (FILES=N sets the files count, NOFILES=1 skips them).
IFS=';' read -ra scenarios <<< "${SCENARIOS:-randread 4k 32 256m IOPS;read 2m 16 1g MB/s;write 2m 16 1g MB/s}"
for sc in "${scenarios[@]}"; do
  set -- $sc
  set -- "$1" "$2" "$3" "$4" "$5" "${6:-io_uring}" "${7:-1}"
  : > "$work/f"; : > "$work/e"
  for r in $(seq "$rounds"); do
    run_fio "$1" "$2" "$3" "$4" "$6" "$7" >> "$work/f"
    run_engine "$1" "$2" "$3" "$4" "$6" "$7" >> "$work/e"
  done
  col=1; [ "$5" = "MB/s" ] && col=2
  fm=$(awk -v c=$col '{print $c}' "$work/f" | median); em=$(awk -v c=$col '{print $c}' "$work/e" | median)
  fc=$(awk '{print $3}' "$work/f" | median); ec=$(awk '{print $3}' "$work/e" | median)
  printf '%-34s %12s %12s %7s   %10s %10s %7s\n' "$1 $2 QD$3 $6 ×$7 ($5)" "$fm" "$em" "$(ratio "$em" "$fm")" "$fc" "$ec" "$(ratio "$ec" "$fc")"
  echo "   fio runs: $(awk -v c=$col '{printf "%s ", $c}' "$work/f")  engine runs: $(awk -v c=$col '{printf "%s ", $c}' "$work/e")"
done
if [ -z "${NOFILES:-}" ]; then
  files=${FILES:-200}
  echo "== files vs fs_mark 3.3: $files files of 1 MiB with fsync, one thread, $rounds rounds, alternating"
  : > "$work/f"; : > "$work/e"
  for r in $(seq "$rounds"); do
    rm -rf "$dir/bench-fsmark"; mkdir -p "$dir/bench-fsmark"
    sync; sleep 1
    (cd "$dir/bench-fsmark" && fs_mark -d d -s 1048576 -n "$files" -t 1 -S 1 -L 1) 2>/dev/null \
      | awk '/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ *$/ {print $4}' >> "$work/f"
    rm -rf "$dir/bench-fsmark"
    sed "s/\${FILES}/$files/" "$work/profiles/test-profiles/bench-files/profile.yaml" > "$work/pf.yaml"
    mkdir -p "$work/profiles/test-profiles/bfiles"
    sed 's/^id: bench-files/id: bfiles/' "$work/pf.yaml" > "$work/profiles/test-profiles/bfiles/profile.yaml"
    rm -rf "$ENGINE_HOME/results/f"
    sync; sleep 1
    if "$ENGINE" benchmark bfiles -y --runs 1 --target-dir "$dir" --save f >/dev/null 2>&1; then
      python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['entries'][0]['value'])" "$ENGINE_HOME/results/f/result.json" >> "$work/e"
    fi
  done
  if [ -s "$work/e" ]; then
    fm=$(median < "$work/f"); em=$(median < "$work/e")
    printf '%-34s %12s %12s %7s\n' "files 1MiB fsync (Files/s)" "$fm" "$em" "$(ratio "$em" "$fm")"
    echo "   fs_mark runs: $(tr '\n' ' ' < "$work/f")  engine runs: $(tr '\n' ' ' < "$work/e")"
  else
    echo "   (the files workload is not available in this build)"
  fi
fi
