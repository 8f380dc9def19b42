#!/usr/bin/env bash
# A throwaway PostgreSQL on loopback, for the tests and deploy/cluster.sh:
# its own data directory (initdb), trust authentication for the `postgres`
# user on 127.0.0.1 only, no fsync. Installs Debian's `postgresql` package
# when no PostgreSQL is found (as root, or with sudo that asks no password).
#
#   usage: scripts/postgres.sh up [DIR]      start (or find running) the server of DIR;
#                                            prints its URL, postgres://postgres@127.0.0.1:PORT/postgres
#          scripts/postgres.sh down [DIR]    stop it, wait for it to exit, remove DIR
#          scripts/postgres.sh url [DIR]     print the URL of the running server (exit 1 if none)
#          scripts/postgres.sh install       install only
#
# DIR (default ${MCP_POSTGRES_DIR:-/tmp/mcp-postgres}, created if missing) holds data/,
# sock/ (its Unix socket), port, log. A later `up` of the same DIR reuses its port.
# Environment (optional): MCP_POSTGRES_PORT (the port for `up`; default: DIR's last one,
# else a free one), MCP_POSTGRES_OWNER_PID (`up` only: stop the server and remove DIR
# once that process has exited, for tests that cannot say `down` when they end).
#
# stdout carries only the URL (up, url); progress and errors go to stderr. Exit status:
# 0 ok, 1 failure (the server log's tail is shown), 2 bad usage, 3 no PostgreSQL here and
# none could be installed (the tests skip on 3 outside CI).
# As root, the server runs as the `postgres` user the package creates (PostgreSQL
# refuses to run as root), and DIR belongs to that user.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
say() { echo "postgres: $*" >&2; }
die() { say "$*"; exit 1; }
usage() { echo "usage: $0 up [DIR] | down [DIR] | url [DIR] | install" >&2; exit 2; }

dir=${2:-${MCP_POSTGRES_DIR:-/tmp/mcp-postgres}}

bin_dir() { # the newest PostgreSQL's binaries: Debian's, else those on PATH
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null && command -v pg_ctl >/dev/null && { dirname "$(command -v pg_ctl)"; return 0; }
  return 1
}

install() {
  bin_dir >/dev/null && return 0
  # The package may start a server of its own (port 5432); ours use other ports.
  bash "$here/apt-install.sh" postgres postgresql || exit
  bin_dir >/dev/null || { say "postgresql installed, but no initdb found"; exit 3; }
}

# Runs a PostgreSQL binary as the user that owns the server: `postgres` when we are root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url_of() { echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres"; }

running() { # the server of DIR answers
  [ -f "$dir/port" ] && [ -f "$dir/data/postmaster.pid" ] \
    && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 \
    && as_owner "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")" -t 2
}

watch_owner() { # PID: stop the server and remove DIR once PID has exited
  local owner=$1
  setsid bash -c '
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    exec 9>"$3/.lock"; flock 9
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$2/pg_ctl" -D "$3/data" -m immediate -w stop
    else "$2/pg_ctl" -D "$3/data" -m immediate -w stop; fi
    rm -rf "$3"' watcher "$owner" "$bin" "$dir" >/dev/null 2>&1 </dev/null 9>&- &
}

# DIR/.lock (fd 9) serialises up and down of one DIR; the server and the
# watcher must not inherit it, or they would hold it for their lifetime.
up() {
  install
  bin=$(bin_dir)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  exec 9>"$dir/.lock"
  flock -w 120 9 || die "timed out waiting for another start in $dir"
  if running; then
    url_of
    return 0
  fi
  local port=${MCP_POSTGRES_PORT:-}
  [ -n "$port" ] || port=$(cat "$dir/port" 2>/dev/null || true)
  [ -n "$port" ] || port=$(free_port)
  echo "$port" >"$dir/port"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    rm -rf "$dir/data"
    as_owner mkdir -p "$dir/data" "$dir/sock"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >>"$dir/log" 2>&1 \
      || { tail -n 20 "$dir/log" >&2; die "initdb failed in $dir/data"; }
  fi
  as_owner mkdir -p "$dir/sock"
  [ "$(id -u)" -eq 0 ] && { touch "$dir/log"; chown postgres: "$dir/log"; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null 9>&- \
    || { tail -n 20 "$dir/log" >&2; die "PostgreSQL did not start on 127.0.0.1:$port (log: $dir/log)"; }
  [ -n "${MCP_POSTGRES_OWNER_PID:-}" ] && watch_owner "$MCP_POSTGRES_OWNER_PID"
  say "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port, data in $dir"
  url_of
}

down() {
  [ -d "$dir" ] || return 0
  bin=$(bin_dir) || { rm -rf "$dir"; return 0; }
  exec 9>"$dir/.lock"
  flock -w 120 9 || die "timed out waiting for another start in $dir"
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 \
      || as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  url)
    bin=$(bin_dir) || exit 1
    running || { say "no PostgreSQL running for $dir"; exit 1; }
    url_of
    ;;
  install) install ;;
  *) usage ;;
esac
