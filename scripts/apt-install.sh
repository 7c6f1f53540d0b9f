#!/usr/bin/env bash
# Install the given Debian packages with apt-get unless dpkg lists them as installed already.
#   bash scripts/apt-install.sh PKG...        (scripts/bootstrap.sh passes scripts/apt-packages.txt)
# Needs root, or sudo without a password. Runs `apt-get update` only when something is missing.
set -euo pipefail

missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "apt-install: missing system packages ${missing[*]} and no apt-get: install them by hand" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo)
else
  echo "apt-install: need root to run: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "[apt-install] apt-get install ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
