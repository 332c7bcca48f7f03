#!/usr/bin/env bash
# WASM plugin performance, in one invocation (numbers in README.md, "WASM plugins"):
#   1. sha256 of 256 MiB: the sha256 example as a plugin vs the same code
#      built natively (plugins/native-bench); goal >= 0.8x.
#   2. cached instantiate + first call (cache read and checksum, deserialize,
#      instantiate, configure + run of a 1 KiB hash); goal <= 5 ms.
#   3. cold compile time of each example (fresh cache).
#   4. plugin file I/O: the files-io and seq-io examples' write/read MB/s vs
#      the same code native, in the same directory, through engine's bulk
#      file calls and through std::fs over WASI; goal >= 0.8x.
#   5. compile bounds (issue 44): the sha256 example with a core module of
#      one function at the limits (1,024-deep nesting, then a body just under
#      1 MiB) compiles in bounded time; a compile bomb (2.3 M nested blocks)
#      is refused before compiling, and how long that takes.
# Usage: scripts/bench-wasm.sh [DIR]   (DIR: where the I/O runs; default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
io_dir="${1:-/tmp}"
reps=3

echo "building (release): engine, plugins for wasm32-wasip2, native-bench" >&2
cargo build --release -q -p engine
(cd plugins && CARGO_TARGET_DIR="$PWD/target" cargo build --release -q --target wasm32-wasip2 \
  && CARGO_TARGET_DIR="$PWD/target" cargo build --release -q -p native-bench \
  && CARGO_TARGET_DIR="$PWD/target/soft" cargo build --release -q -p native-bench --features soft)
engine="$CARGO_TARGET_DIR/release/engine"
wasm=plugins/target/wasm32-wasip2/release
native=plugins/target/soft/release/native-bench
native_hw=plugins/target/release/native-bench

work=$(mktemp -d)
scratch=$(mktemp -d -p "$io_dir" bench-wasm.XXXXXX)
trap 'rm -rf "$work" "$scratch"' EXIT
export ENGINE_HOME="$work/home"

# `engine plugin info … --run` prints `value:      NAME = X`.
value() { awk -v n="$1" '$1 == "value:" && $2 == n { print $4 }'; }
best() { sort -g | tail -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== 1. sha256 of 256 MiB (MB/s = 10^6 B/s, best of $reps)"
w=$(for _ in $(seq $reps); do
  "$engine" plugin info "$wasm/sha256_plugin.wasm" -c size=256MiB --memory 512MiB --run | value throughput
done | best)
n=$(for _ in $(seq $reps); do "$native" sha256 size=256MiB | awk '$1 == "throughput" { print $2 }'; done | best)
h=$(for _ in $(seq $reps); do "$native_hw" sha256 size=256MiB | awk '$1 == "throughput" { print $2 }'; done | best)
printf '   wasm %8.1f MB/s   native, same code %8.1f MB/s   ratio %s (goal >= 0.8)\n' "$w" "$n" "$(ratio "$w" "$n")"
printf '   (native with the CPU'"'"'s SHA instructions, which WebAssembly lacks: %.1f MB/s, ratio %s)\n' "$h" "$(ratio "$w" "$h")"

echo "== 2. cached instantiate + first call (median of 7; the cache is warm)"
"$engine" plugin info "$wasm/sha256_plugin.wasm" >/dev/null
for _ in $(seq 7); do
  "$engine" plugin info "$wasm/sha256_plugin.wasm" -c size=1KiB --run \
    | awk '$1 == "code:" { load = $(NF - 1) } $1 == "run:" { inst = $3; call = $6 } $1 == "total:" { total = $2 }
           END { printf "%.3f %.3f %.3f %.3f %.3f\n", load, inst, call, load + inst + call, total }'
done > "$work/cached"
for col in 1 2 3 4 5; do cut -d' ' -f$col "$work/cached" | median; done | paste -sd' ' \
  | awk '{ printf "   load from cache %.2f ms + instantiate %.2f ms + configure/run %.2f ms = %.2f ms (goal <= 5); whole process %.1f ms\n", $1, $2, $3, $4, $5 }'

echo "== 3. cold compile (Cranelift, release engine; fresh cache each)"
for p in sha256_plugin files_io_plugin dbench_parser; do
  rm -rf "$ENGINE_HOME/cache"
  ms=$("$engine" plugin info "$wasm/$p.wasm" | awk '$1 == "code:" { print $(NF - 1) }')
  printf '   %-16s %7.1f ms  (%s KiB)\n' "$p" "$ms" "$(( $(stat -c %s "$wasm/$p.wasm") / 1024 ))"
done

# One line per plugin x API: best of $reps for wasm and native, run alternately.
io_row() { # LABEL WASM NATIVE-MODE key=value...
  local label=$1 plugin=$2 mode=$3; shift 3
  local ww=() wr=() nw=() nr=() out
  for _ in $(seq $reps); do
    out=$(TMPDIR="$scratch" "$engine" plugin info "$wasm/$plugin.wasm" "${@/#/-c}" --run)
    ww+=("$(value write <<<"$out")"); wr+=("$(value read <<<"$out")")
    out=$("$native" "$mode" "$scratch" "$@")
    nw+=("$(awk '$1 == "write" { print $2 }' <<<"$out")"); nr+=("$(awk '$1 == "read" { print $2 }' <<<"$out")")
  done
  local bw br bnw bnr
  bw=$(printf '%s\n' "${ww[@]}" | best); br=$(printf '%s\n' "${wr[@]}" | best)
  bnw=$(printf '%s\n' "${nw[@]}" | best); bnr=$(printf '%s\n' "${nr[@]}" | best)
  printf '   %-22s write: wasm %7.1f native %7.1f ratio %s   read: wasm %7.1f native %7.1f ratio %s\n' \
    "$label" "$bw" "$bnw" "$(ratio "$bw" "$bnw")" "$br" "$bnr" "$(ratio "$br" "$bnr")"
}

fs=$(df -T "$scratch" | awk 'NR == 2 { print $2 }')
echo "== 4. plugin file I/O vs the same code native, in $io_dir ($fs), MB/s, best of $reps (goal >= 0.8)"
echo "   files-io: 8 files x 32 MiB, 1 MiB blocks, fsync each, read back and checked"
io_row "files-io, bulk calls" files_io_plugin files-io files=8 size=32MiB block=1MiB api=files
io_row "files-io, std::fs/WASI" files_io_plugin files-io files=8 size=32MiB block=1MiB api=std
echo "   seq-io: one 256 MiB file in 1 MiB blocks, one fsync, read back unchecked"
io_row "seq-io, bulk calls" seq_io_plugin seq-io size=256MiB block=1MiB api=files
io_row "seq-io, std::fs/WASI" seq_io_plugin seq-io size=256MiB block=1MiB api=std
echo "   (bulk calls: engine:plugin/files, Context::open_file; native = plugins/native-bench, the same"
echo "    workload code built for the host, where open_file is pread/pwrite)"

# The sha256 plugin with one more core module: a function of DEPTH nested
# blocks repeated REPEAT times (a component accepts an appended module).
bomb() { # DEPTH REPEAT OUT
  python3 - "$wasm/sha256_plugin.wasm" "$1" "$2" "$3" <<'PY'
import sys
src, depth, repeat, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def leb(v):
    b = bytearray()
    while True:
        x = v & 0x7f; v >>= 7
        b.append(x | (0x80 if v else 0))
        if not v: return bytes(b)
def sec(i, body): return bytes([i]) + leb(len(body)) + body
body = (b"\x02\x40" * depth + b"\x0b" * depth) * repeat + b"\x0b"
func = leb(0) + body
code = leb(1) + leb(len(func)) + func
m = b"\0asm\x01\0\0\0" + sec(1, leb(1) + b"\x60\x00\x00") + sec(3, leb(1) + leb(0)) + sec(10, code)
c = open(src, "rb").read()
at, mods = 8, 0
while at < len(c):
    i = c[at]; at += 1; n = 0; sh = 0
    while True:
        b = c[at]; at += 1; n |= (b & 0x7f) << sh; sh += 7
        if not b & 0x80: break
    at += n; mods += i == 1
c += sec(1, m) + sec(2, leb(1) + b"\x00" + leb(mods) + leb(0))
open(out, "wb").write(c)
PY
}
echo "== 5. compile bounds (fresh cache each; wall time of \`engine plugin info\`)"
for spec in "1024 340 at the limits: 1,024 deep, 340 times (~1 MiB body)" "1024 1 1,024 deep once" "2300000 1 a compile bomb: 2.3 M nested blocks (7 MB)"; do
  set -- $spec; depth=$1 repeat=$2; shift 2
  bomb "$depth" "$repeat" "$work/b.wasm"
  rm -rf "$ENGINE_HOME/cache"
  /usr/bin/time -o "$work/t" -f '%e %M' "$engine" plugin info "$work/b.wasm" >"$work/o" 2>&1 || true
  read -r secs kib < <(tail -1 "$work/t")
  printf '   %-52s %6.2f s  peak RSS %6d MiB  %s\n' "$*" "$secs" "$((kib / 1024))" \
    "$(grep -o 'more than [0-9]* engine compiles\|nests blocks [0-9]* deep' "$work/o" | head -1 || true)"
done
