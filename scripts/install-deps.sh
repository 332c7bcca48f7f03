#!/usr/bin/env bash
# Installs what engine's tests and built-in profiles need on Debian/Ubuntu.
# Safe to run again: it skips what is present.
set -euo pipefail
# nginx serves downloads in the install tests; build-essential, bc, bison,
# flex, libelf-dev, libssl-dev and linux-source-6.1 build Linux (the
# build-linux-kernel profile, from Debian's sources: kernel.org is not
# reachable from CI); curl is the download benchmark's reference.
pkgs=(fio fsmark sqlite3 mawk hyperfine util-linux e2fsprogs xfsprogs pci.ids chromium fonts-dejavu-core dbench
  nginx-light curl build-essential bc bison flex libelf-dev libssl-dev xz-utils linux-source-6.1)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# WASM plugins (component model) are built for this target.
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
