#!/usr/bin/env bash
# Builds the book (book/ → target/book/) with mdBook, failing on any warning
# as well as on an error (mdBook itself only fails on errors). The
# references in it are checked by `cargo test --test integration book`.
# Usage: scripts/build-book.sh   (mdBook: scripts/install-deps.sh --tests)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mdbook >/dev/null || { echo "mdbook is not installed: scripts/install-deps.sh --tests" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mdbook build book >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
if grep -E "WARN|ERROR" "$log" >&2; then
  echo "the book built with warnings (above)" >&2
  exit 1
fi
echo "the book is in target/book/index.html"
