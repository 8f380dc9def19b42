#!/usr/bin/env bash
# Installs Debian packages for the repository's scripts, as root or with a
# sudo that asks no password:
#
#   bash scripts/apt-install.sh WHO PACKAGE...
#
# WHO names the script asking, in its messages. Tries the package lists as
# they are first, and updates them only if that fails. Exit status: 0
# installed, 3 not possible here (not root and no such sudo, no apt-get, or
# the install failed; the log's tail goes to stderr), 2 bad usage.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 WHO PACKAGE..." >&2; exit 2; }
who=$1
shift
say() { echo "$who: $*" >&2; }
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && sudo -n true 2>/dev/null || { say "$* not installed, and installing needs root"; exit 3; }
  sudo=(sudo -n)
fi
command -v apt-get >/dev/null || { say "$* not installed, and there is no apt-get to install it"; exit 3; }
say "installing $* from Debian's packages"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y --no-install-recommends "$@" >"$log" 2>&1 \
  || { "${sudo[@]}" apt-get update >>"$log" 2>&1 \
       && "${sudo[@]}" apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1; } \
  || { tail -n 20 "$log" >&2; say "cannot install $*"; exit 3; }
