#!/usr/bin/env bash
# install-deps.sh - install what iohint needs to build and test, from Debian's
# packages (Debian 12). Idempotent: installs only what is missing. Needs root
# (or sudo) the first time.
set -euo pipefail
pkgs=(
  gcc meson ninja-build pkg-config
  libunwind-dev libcmocka-dev liblttng-ust-dev liburing-dev libfuse3-dev fuse3
  python3 strace util-linux gdb
  samtools sqlite3 fio xz-utils bzip2 gzip tar
  lttng-tools babeltrace2
  libjemalloc2
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
