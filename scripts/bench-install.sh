#!/usr/bin/env bash
# Measures installing (README, "Performance"):
#  1. download throughput of `engine cache fill` (stream, SHA-256, fsync,
#     rename) from nginx on 127.0.0.1, next to curl fetching the same file
#     (curl neither hashes nor syncs); median of N runs each;
#  2. a cache hit for a suite's installs: `engine install` of a suite whose
#     profiles are installed (tiobench, build-linux-kernel from Debian's
#     sources, fio, fs-mark, sqlite), timed by hyperfine.
# Usage: scripts/bench-install.sh [SIZE_MIB] [RUNS]   (default 512 MiB, 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-512}
runs=${2:-5}
command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
command -v nginx curl hyperfine >/dev/null || { echo "needs nginx, curl, hyperfine: scripts/install-deps.sh" >&2; exit 1; }
cargo build --release -q
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
engine=$target_dir/release/engine
work=$(mktemp -d /var/tmp/bench-install.XXXXXX)
cleanup() { [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/www" "$work/profiles/test-profiles/big" "$work/profiles/suites"
head -c $((size_mib * 1048576)) /dev/urandom > "$work/www/big.bin"
sha=$(sha256sum "$work/www/big.bin" | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
user=""; [ "$(id -u)" = 0 ] && user="user root;"
cat > "$work/nginx.conf" <<EOF
$user
pid $work/nginx.pid;
error_log $work/error.log;
worker_processes 1;
events { worker_connections 64; }
http { access_log off; sendfile on; client_body_temp_path $work/body;
  server { listen 127.0.0.1:$port; root $work/www; } }
EOF
nginx -c "$work/nginx.conf" -p "$work" -e "$work/error.log"
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
cat > "$work/profiles/test-profiles/big/profile.yaml" <<EOF
id: big
version: 1.0.0
title: Big download
test_type: other
install:
  downloads:
    - {file: big.bin, size: $((size_mib * 1048576)), sha256: $sha, insecure: true, urls: ["http://127.0.0.1:$port/big.bin"]}
executor: {external: {program: "true"}}
results: [{id: s, unit: Seconds, proportion: LIB}]
parsers: [{result: s, wall_time: true}]
EOF
export ENGINE_PROFILE_PATH=$work/profiles
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
curl_t=(); engine_t=()
for i in $(seq "$runs"); do
  rm -f "$work/curl.out"; sync
  s=$(date +%s.%N); curl -s -o "$work/curl.out" "http://127.0.0.1:$port/big.bin"; e=$(date +%s.%N)
  curl_t+=("$(echo "$e - $s" | bc -l)")
  rm -rf "$work/home"; sync
  s=$(date +%s.%N); ENGINE_HOME=$work/home "$engine" cache fill big >/dev/null 2>&1; e=$(date +%s.%N)
  engine_t+=("$(echo "$e - $s" | bc -l)")
done
c=$(printf '%s\n' "${curl_t[@]}" | median); g=$(printf '%s\n' "${engine_t[@]}" | median)
mb=$(echo "$size_mib * 1.048576" | bc -l)
printf 'download %d MiB over loopback, median of %d runs\n' "$size_mib" "$runs"
printf '  curl -o FILE                  %6.3f s  %7.1f MB/s\n' "$c" "$(echo "$mb / $c" | bc -l)"
printf '  engine cache fill (sha256+fsync) %6.3f s  %7.1f MB/s  ratio %.2f\n' "$g" "$(echo "$mb / $g" | bc -l)" "$(echo "$c / $g" | bc -l)"

# 2. Cache hit: every profile of the suite installed, `engine install` again.
cat > "$work/profiles/suites/installs.yaml" <<EOF
title: Installs
tests:
  - profile: tiobench
  - profile: build-linux-kernel
    options: {source: Linux 6.1 (Debian linux-source-6.1)}
  - profile: fio
  - profile: fs-mark
  - profile: sqlite
EOF
export ENGINE_HOME=$work/home
ENGINE_DOWNLOAD_CACHE=$PWD/tests/fixtures/downloads "$engine" install suite/installs >/dev/null
hyperfine -N --warmup 3 --runs 30 --export-json "$work/hit.json" "$engine install suite/installs" >/dev/null
python3 - "$work/hit.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"cache hit, `engine install suite/installs` (5 profiles, all installed): median {r['median']*1000:.1f} ms, mean {r['mean']*1000:.1f} ± {r['stddev']*1000:.1f} ms")
EOF
