#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned below)
# against examples/everything over Streamable HTTP on loopback, and gates on the result.
#
#   usage: scripts/conformance.sh [REVISION...]      (default: 2026-07-28 2025-11-25)
#
# Per revision it prints one row per scenario, then
#     conformance REVISION: N passed, M failed    (scored scenarios)
#     not scored: N passed, M failed
# With MCP_CONFORMANCE_VIA_GATEWAY=ERA (2026-07-28 or 2025-11-25) the server under test is
# examples/gateway with one transparent upstream, examples/everything over stdio spoken to in ERA;
# the expected failures are then scripts/conformance-baseline-via-ERA-REVISION's, and the Skills
# scenarios are not run (the gateway does not proxy skills).
# and, for 2026-07-28, the Skills extension's scenarios (sep-2640-*: extension scenarios, in no
# requirement set, so run one by one, forced: --scenario NAME --spec-version 2026-07-28 --force):
#     skills (sep-2640, forced): N passed, M failed (C checks, S skipped)
# gated on every check of each being a SUCCESS (none SKIPPED, no WARNING, no FAILURE).
# The gate: every scored scenario, and the not-scored ones named in REQUIRED_NOT_SCORED,
# must PASS with no WARNING check, unless listed in scripts/conformance-baseline-REVISION
# (expected failures, one scenario per line, # comments); a listed scenario that passes
# cleanly is an error too (take it off the list). Exit status: 0 when every revision passes
# the gate; 1 when the gate fails; 2 bad usage; 3 the suite or a Node >= 22 could not be
# installed; 4 the server did not start; 5 the suite left no usable results.
#
# First run: installs Node 22 (npm package node-linux-<arch>, on Linux x64/arm64; elsewhere
# a node >= 22 on PATH is used) and the suite from the npm registry into
#   ${MCP_CONFORMANCE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance}
# Later runs reuse it. Raw results (one checks.json per scenario) stay under results/ there.
#
# Environment (optional): MCP_CONFORMANCE_HOME (above); MCP_CONFORMANCE_NODE (a node >= 22 to
# use instead); CONFORMANCE_SCENARIO_TIMEOUT_MS (per scenario, default 30000);
# CONFORMANCE_RUN_TIMEOUT_S (whole suite per revision, default 900); CARGO_TARGET_DIR.
# Apart from the one-time npm install, all traffic stays on 127.0.0.1 (proxies are unset).
set -uo pipefail

SUITE_PKG=@modelcontextprotocol/conformance
SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
SKILLS_SCENARIOS="sep-2640-skills-enumeration sep-2640-skills-directory sep-2640-skills-manifest"
REQUIRED_NOT_SCORED="json-schema-2020-12 http-header-validation http-custom-header-server-validation server-session-lifecycle
  tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal tasks-mrtr-input
  tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications tasks-required-task-error
  tasks-mrtr-composition"

die() { local code=$1; shift; echo "conformance: $*" >&2; exit "$code"; }

repo=$(cd "$(dirname "$0")/.." && pwd) || exit 2
cd "$repo" || exit 2
scripts=$repo/scripts

[ $# -gt 0 ] || set -- 2026-07-28 2025-11-25
for rev in "$@"; do
  [[ "$rev" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || die 2 "usage: $0 [REVISION...]   (e.g. 2026-07-28 2025-11-25); got '$rev'"
done

# --- the suite and a node >= 22, installed once ------------------------------------------
home=${MCP_CONFORMANCE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance}
runner=$home/runner
suite=$runner/node_modules/$SUITE_PKG
cli=$suite/dist/index.js

# shellcheck source=node.sh
. "$scripts/node.sh"
node_pkg=$(node_npm_package)
pick_node() {
  node_pick 22 "${MCP_CONFORMANCE_NODE:-}" ${node_pkg:+"$runner/node_modules/$node_pkg/bin/node"} "$(command -v node 2>/dev/null || true)"
}
installed_version() {
  [ -f "$suite/package.json" ] && [ -f "$cli" ] || return 1
  "$1" -p "require('$suite/package.json').version" 2>/dev/null
}

node=$(pick_node) || node=""
if [ -z "$node" ] || [ "$(installed_version "$node")" != "$SUITE_VERSION" ] ||
   { [ -n "$node_pkg" ] && [ -z "${MCP_CONFORMANCE_NODE:-}" ] && [ ! -x "$runner/node_modules/$node_pkg/bin/node" ]; }; then
  command -v npm >/dev/null || die 3 "npm is needed once, to install $SUITE_PKG@$SUITE_VERSION into $runner"
  pkgs=("$SUITE_PKG@$SUITE_VERSION")
  [ -n "$node_pkg" ] && pkgs+=("$node_pkg@$NODE_VERSION")
  echo "conformance: installing ${pkgs[*]} into $runner"
  mkdir -p "$runner" || die 3 "cannot create $runner"
  [ -f "$runner/package.json" ] || echo '{ "name": "mcp-conformance-runner", "private": true }' >"$runner/package.json"
  (cd "$runner" && npm install --no-fund --no-audit --loglevel=error "${pkgs[@]}") ||
    die 3 "npm install of ${pkgs[*]} failed"
  node=$(pick_node) || die 3 "no node >= 22: none from npm for $(uname -s)/$(uname -m); put a node >= 22 on PATH or set MCP_CONFORMANCE_NODE"
  got=$(installed_version "$node") || got=none
  [ "$got" = "$SUITE_VERSION" ] || die 3 "installed $SUITE_PKG is $got, expected $SUITE_VERSION"
fi
echo "conformance: $SUITE_PKG $SUITE_VERSION, node $("$node" --version) ($node)"

for rev in "$@"; do
  [ -f "$suite/requirements/$rev.yaml" ] || die 2 "revision $rev has no requirement set in $SUITE_PKG $SUITE_VERSION"
done

# --- from here on, loopback only ---------------------------------------------------------
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
export NO_PROXY='localhost,127.0.0.1,::1' no_proxy='localhost,127.0.0.1,::1'
export NO_COLOR=1 FORCE_COLOR=0

# --- build and start examples/everything (or the gateway in front of it) ---------------------
cargo build --quiet --example everything || die 4 "cargo build --example everything failed"
target=${CARGO_TARGET_DIR:-target}
case "$target" in /*) ;; *) target=$repo/$target ;; esac
server=$target/debug/examples/everything
[ -x "$server" ] || die 4 "no server binary at $server"
server_args=()
via=${MCP_CONFORMANCE_VIA_GATEWAY:-}
if [ -n "$via" ]; then
  # examples/gateway with one transparent upstream: examples/everything over stdio, spoken to
  # in the era $via (2026-07-28 or 2025-11-25).
  [[ "$via" == 2026-07-28 || "$via" == 2025-11-25 ]] || die 2 "MCP_CONFORMANCE_VIA_GATEWAY is 2026-07-28 or 2025-11-25, not '$via'"
  cargo build --quiet --example gateway || die 4 "cargo build --example gateway failed"
  gateway_config=$(mktemp "${TMPDIR:-/tmp}/mcp-conformance-gateway.XXXXXX") || die 4 "mktemp failed"
  # A 2025-11-25 upstream hears a session's capabilities once: one process of everything per set
  # that callers declare lets each scenario's tools see what its client declared.
  printf '{"mcpServers": {"everything": {"command": "%s", "prefix": "", "protocolVersion": "%s", "sessionPerCapabilities": true}}}\n' "$server" "$via" >"$gateway_config"
  server=$target/debug/examples/gateway
  server_args=(--config "$gateway_config")
  echo "conformance: through examples/gateway, to examples/everything over stdio at $via"
fi

log=$(mktemp "${TMPDIR:-/tmp}/mcp-conformance-server.XXXXXX") || die 4 "mktemp failed"
pid=""
status=0
alive() {  # running, not a zombie (kill -0 succeeds on zombies)
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ -n "$stat" && "$stat" != Z* ]]
}
stop_server() {  # SIGTERM (graceful), then SIGKILL after 5 s
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do alive "$1" || break; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
finish() {
  local rc=$?
  [ "$status" -ne 0 ] && rc=$status
  [ -n "$pid" ] && stop_server "$pid"
  if [ "$rc" -ne 0 ] && [ -s "$log" ]; then
    echo "--- server log (last 20 lines of $log):" >&2
    tail -n 20 "$log" >&2
  else
    rm -f "$log"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
url=""
for attempt in 1 2 3; do
  port=$(free_port) || die 4 "cannot pick a free port (python3 needed)"
  "$server" "${server_args[@]}" --http "127.0.0.1:$port" >>"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    alive "$pid" || break
    code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/mcp" 2>/dev/null) || true
    if [ -n "$code" ] && [ "$code" != 000 ]; then url="http://127.0.0.1:$port/mcp"; break; fi
    sleep 0.1
  done
  [ -n "$url" ] && break
  stop_server "$pid"; pid=""   # e.g. the port was taken meanwhile
done
[ -n "$url" ] || die 4 "examples/everything did not answer on 127.0.0.1"
echo "conformance: server $url (pid $pid)"

# --- one suite run per revision ---------------------------------------------------------------
for rev in "$@"; do
  out=$home/results/run-$rev-$(date -u +%Y%m%dT%H%M%SZ)-$$
  mkdir -p "$out" || die 5 "cannot create $out"
  echo
  start=$(date +%s)
  timeout "${CONFORMANCE_RUN_TIMEOUT_S:-900}" "$node" "$cli" server \
    --url "$url" --requirements "$rev" \
    --timeout "${CONFORMANCE_SCENARIO_TIMEOUT_MS:-30000}" \
    -o "$out" >"$out/stdout.txt" 2>"$out/stderr.txt"
  suite_rc=$?
  [ "$suite_rc" -eq 124 ] && echo "conformance: the suite hit the ${CONFORMANCE_RUN_TIMEOUT_S:-900}s cap" >&2
  baseline=$scripts/conformance-baseline-$rev
  [ -n "$via" ] && baseline=$scripts/conformance-baseline-via-$via-$rev
  SUITE_DIR=$suite REV=$rev OUT=$out URL=$url SUITE_RC=$suite_rc ELAPSED=$(( $(date +%s) - start )) \
  BASELINE_FILE=$baseline REQUIRED_NOT_SCORED=$REQUIRED_NOT_SCORED \
    "$node" "$scripts/conformance-report.js"
  rc=$?
  case "$rc" in
    0) ;;
    1) [ "$status" -eq 0 ] && status=1 ;;
    *) echo "conformance: the $rev run left no usable results (suite exit $suite_rc); see $out/stdout.txt and $out/stderr.txt" >&2
       status=5 ;;
  esac
  alive "$pid" || { echo "conformance: the server died during the $rev run" >&2; status=5; pid=""; break; }
  # The Skills extension (SEP-2640) is written against 2026-07-28: its scenarios run there.
  # The gateway does not proxy skills: through it they are not run.
  [ "$rev" = 2026-07-28 ] && [ -z "$via" ] || continue
  skills_out=$out/skills
  mkdir -p "$skills_out" || die 5 "cannot create $skills_out"
  for scenario in $SKILLS_SCENARIOS; do
    timeout 300 "$node" "$cli" server --url "$url" --scenario "$scenario" --spec-version 2026-07-28 --force \
      --timeout "${CONFORMANCE_SCENARIO_TIMEOUT_MS:-30000}" \
      -o "$skills_out" >"$skills_out/$scenario.txt" 2>&1
  done
  OUT=$skills_out SCENARIOS=$SKILLS_SCENARIOS LABEL="skills (sep-2640, forced)" \
    "$node" "$scripts/conformance-skills.js" || { [ "$status" -eq 0 ] && status=1; }
  alive "$pid" || { echo "conformance: the server died during the skills scenarios" >&2; status=5; pid=""; break; }
done
exit "$status"
