#!/usr/bin/env bash
# Installs what engine's main job (or, with --tests, its tests and built-in
# profiles) need on Debian/Ubuntu.
# Safe to run again: it skips what is present.
set -euo pipefail
# The main job (README, "Quick start" 1): what suite/disk-quick runs — its
# optional tests (fio, fs_mark, sqlite3, pgbench with its server, Git, dbench,
# PostMark) included — and what building engine needs (a C compiler for the
# bundled SQLite). `--tests` adds what the test suite and the other profiles
# need (README, "Quick start" 2; .ci/run).
tests=""
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  *) echo "usage: scripts/install-deps.sh [--tests]" >&2; exit 2 ;;
esac
pkgs=(fio fsmark sqlite3 dbench postmark postgresql postgresql-client git util-linux e2fsprogs pci.ids
  gcc libc6-dev)
if [ -n "$tests" ]; then pkgs+=(mawk hyperfine xfsprogs chromium fonts-dejavu-core
  # engine serve (issue 57): its pages driven in headless Chromium through ChromeDriver.
  chromium-driver
  # The seeds' other tools (issue 13): nginx and Apache httpd with ab, the
  # compressors, and the kernel tarball unpack-linux extracts.
  nginx-light apache2 apache2-utils
  # Monitors (issue 40): iostat reads the same counters, checked against engine's.
  sysstat
  gzip pbzip2 p7zip-full zstd xz-utils tar linux-source-6.1
  # Fleets (issue 16): the tests' SSH hosts, and Python for Ansible.
  openssh-server openssh-client python3 python3-venv
  # The file-system seed's other CPU references: John the Ripper, OpenSSL, GnuPG 1.
  john openssl gnupg1
  # Installs (issue 12): nginx serves downloads in the install tests;
  # build-essential, bc, bison, flex, libelf-dev, libssl-dev build Linux (the
  # build-linux-kernel profile, from Debian's sources: kernel.org is not
  # reachable from CI); curl is the download benchmark's reference.
  curl build-essential bc bison flex libelf-dev libssl-dev
  # build-gcc: Debian's GCC 12 source tarball and GCC's prerequisites.
  gcc-12-source libgmp-dev libmpfr-dev libmpc-dev
  # Hardening (issue 15): GNU time measures a child's peak memory in the
  # hostile-input tests; python3 serves downloads in scripts/fault-inject.sh.
  time python3
  # JUnit reports (issue 54): read back with a real JUnit parser.
  python3-junitparser
  # Profile repositories (issue 14): the index signature must verify with
  # the real minisign tool.
  minisign
  # The Debian package (issue 26): cargo-deb reads library dependencies with
  # dpkg-shlibdeps; the man pages are gzipped.
  dpkg-dev gzip)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # Packaged servers (postgresql, nginx, apache2) are not started: the tests
  # start their own, in their scratch directories.
  own_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ -n "$own_policy" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
fi
[ -n "$tests" ] || exit 0
# scripts/package-deb.sh builds the Debian package with cargo-deb (the test
# installs it, runs it and removes it).
if command -v cargo >/dev/null && ! command -v cargo-deb >/dev/null; then
  cargo install --locked --quiet cargo-deb@3.6.2
fi
# The book (book/, issue 58) is built with mdBook, without its server and
# file watcher (scripts/build-book.sh).
if command -v cargo >/dev/null && ! mdbook --version 2>/dev/null | grep -q "v0.5.4"; then
  cargo install --locked --quiet --no-default-features --features search mdbook@0.5.4
fi
# WASM plugins (component model) are built for this target (by the tests).
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
# Fleets (issue 16): ansible-core and kubernetes-validate from PyPI, and
# Apache Otava (issue 28: change points checked against it), in a
# virtualenv of their own (ENGINE_TOOLS, default /opt/engine-tools), where
# tests/integration/{orchestration,history}.rs and scripts/bench-fleet.sh find them.
# ansible-core 2.19 is the last line whose control node runs on Debian 12's
# Python 3.11.
ENGINE_TOOLS="${ENGINE_TOOLS:-/opt/engine-tools}"
if ! "$ENGINE_TOOLS/bin/python" -c 'import ansible, kubernetes_validate, otava' 2>/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO /usr/bin/python3 -m venv "$ENGINE_TOOLS"
  $SUDO "$ENGINE_TOOLS/bin/pip" install -q --disable-pip-version-check \
    'ansible-core>=2.16,<2.20' 'kubernetes-validate>=1.30' 'apache-otava==0.8.*'
fi
