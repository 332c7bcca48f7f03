#!/usr/bin/env bash
# Builds engine's Debian package with cargo-deb: the engine binary (the
# built-in profiles and suites are inside it), its man pages (generated
# from the command definitions by `engine man`), bash, zsh and fish
# completions, and the README. Writes target/debian/engine_<version>-1_<arch>.deb
# (or into --out DIR) and prints its path.
#   --debug   package the debug build (what the tests use; no release build)
#   --no-build  use the binary already built
# Needs cargo-deb (scripts/install-deps.sh --tests installs it) and dpkg-dev.
# Usage: scripts/package-deb.sh [--debug] [--no-build] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release build=1 out=""
while (($#)); do
  case "$1" in
    --debug) profile=dev; shift ;;
    --no-build) build=""; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v cargo-deb >/dev/null || { echo "needs cargo-deb: cargo install cargo-deb (scripts/install-deps.sh --tests)" >&2; exit 1; }
target=${CARGO_TARGET_DIR:-$PWD/target}
dir=$([ "$profile" = dev ] && echo debug || echo release)
if [ -n "$build" ]; then
  cargo build -p engine --profile "$profile" --quiet
fi
bin=$target/$dir/engine
[ -x "$bin" ] || { echo "no $bin: build it first, or drop --no-build" >&2; exit 1; }
# What the package installs besides the binary, made by the binary itself.
assets=$PWD/target/deb-assets
rm -rf "$assets"
mkdir -p "$assets/man"
"$bin" man --out "$assets/man"
gzip -9n "$assets"/man/*.1
"$bin" completions bash > "$assets/engine.bash"
"$bin" completions zsh > "$assets/_engine"
"$bin" completions fish > "$assets/engine.fish"
args=(-p engine --no-build --profile "$profile")
# The debug build (for the tests) is large: compress it fast.
[ "$profile" = dev ] && args+=(--fast)
[ -n "$out" ] && { mkdir -p "$out"; args+=(--output "$out"); }
cargo deb "${args[@]}" 2>&1 | tail -n 1
