#!/usr/bin/env bash
# Installs the Debian packages Showroom builds against, when missing (one apt-get update first).
# Used by the cluster launcher and the test runner; safe to run again.
set -euo pipefail

packages=(libzmq3-dev libopus-dev libvpx-dev libavformat-dev ffmpeg libprotobuf-c-dev protobuf-compiler pkg-config procps zlib1g-dev libsqlite3-dev openssl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install Swift 6.2 or newer" >&2; exit 1; }
