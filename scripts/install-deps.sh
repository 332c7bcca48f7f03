#!/usr/bin/env bash
# Installs what engine's tests and built-in profiles need on Debian/Ubuntu.
# Safe to run again: it skips what is present.
set -euo pipefail
pkgs=(fio fsmark sqlite3 mawk hyperfine util-linux e2fsprogs xfsprogs pci.ids chromium fonts-dejavu-core dbench
  # The seeds' tools (issue 13): PostgreSQL's server and pgbench, PostMark,
  # Git, nginx and Apache httpd with ab, the compressors, and the kernel
  # tarball unpack-linux extracts.
  postgresql postgresql-client postmark git nginx-light apache2 apache2-utils
  gzip pbzip2 p7zip-full zstd xz-utils tar linux-source-6.1
  # Installs (issue 12): nginx serves downloads in the install tests;
  # build-essential, bc, bison, flex, libelf-dev, libssl-dev build Linux (the
  # build-linux-kernel profile, from Debian's sources: kernel.org is not
  # reachable from CI); curl is the download benchmark's reference.
  curl build-essential bc bison flex libelf-dev libssl-dev
  # Profile repositories (issue 14): the index signature must verify with
  # the real minisign tool.
  minisign)
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
# WASM plugins (component model) are built for this target.
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
