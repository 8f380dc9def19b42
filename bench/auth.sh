#!/usr/bin/env bash
# The cost of authorization: requests/s of a protected `tools/call` (a JWT from a real
# authorization server, verified once and then served from the verifier's cache) against
# the same call unprotected, same binary (examples/after-sales, release), same run.
# wrk, 1 thread, 16 keep-alive connections, BENCH_DURATION (5s) per round, BENCH_ROUNDS (9)
# rounds, each timing the two servers back to back; servers pinned to core 1, wrk to core 0
# (taskset). A shared machine's throughput drifts from minute to minute: the figure is the
# median of the rounds' own ratios, each taken seconds apart.
# Starts oidc-provider with scripts/auth-server.sh (installs it when missing). Prints the
# median of each and the ratio protected / unprotected.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DURATION=${BENCH_DURATION:-5s}
ROUNDS=${BENCH_ROUNDS:-9}
command -v wrk >/dev/null || { echo "auth.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-auth.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    bash scripts/auth-server.sh down "$work/as" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --release --example after-sales
exe=target/release/examples/after-sales
issuer=$(bash scripts/auth-server.sh up "$work/as" 2>/dev/null)
declare -A PORT=([open]=29201 [protected]=29202)
start() { # NAME [env...]
    local name=$1
    shift
    env "$@" taskset -c 1 "$exe" --http "127.0.0.1:${PORT[$name]}" 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q "Authorization:" "$work/$name.log" 2>/dev/null && return 0; sleep 0.1; done
    cat "$work/$name.log" >&2
    exit 1
}
resource="http://127.0.0.1:${PORT[protected]}/mcp"
start open
start protected MCP_AUTH_ISSUER="$issuer" MCP_AUTH_RESOURCE="$resource"
token=$(curl -s -u mcp-client:mcp-client-secret -d grant_type=client_credentials \
    --data-urlencode "resource=$resource" -d scope=tickets:read "$issuer/token" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')

lua() { # AUTH_HEADER_OR_EMPTY
    cat <<LUA
wrk.method = "POST"
wrk.body = [[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"after_sales_quote","arguments":{"order_id":"ORD-1001"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "after_sales_quote"
$1
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK\t%.0f\t%.2f\t%d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(99) / 1000, e.connect + e.read + e.write + e.status + e.timeout))
end
LUA
}
lua "" >"$work/open.lua"
lua "wrk.headers[\"Authorization\"] = \"Bearer $token\"" >"$work/protected.lua"

# Both answer the call (and the protected one refuses it without the token) before timing.
for name in open protected; do
    taskset -c 0 wrk -t1 -c16 -d2s -s "$work/$name.lua" "http://127.0.0.1:${PORT[$name]}/mcp" | grep -q $'^WRK\t[0-9]*\t[0-9.]*\t0$' ||
        { echo "auth.sh: $name: the warm-up had errors" >&2; exit 1; }
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$resource" -H 'content-type: application/json' -d '{}')
[ "$code" = 401 ] || { echo "auth.sh: the protected server answered $code without a token" >&2; exit 1; }

declare -A RPS=([open]="" [protected]="")
RATIOS=""
for round in $(seq 1 "$ROUNDS"); do
    declare -A THIS=()
    for name in open protected; do
        line=$(taskset -c 0 wrk -t1 -c16 -d"$DURATION" -s "$work/$name.lua" "http://127.0.0.1:${PORT[$name]}/mcp" | grep $'^WRK')
        IFS=$'\t' read -r _ rps p99 errors <<<"$line"
        [ "$errors" = 0 ] || { echo "auth.sh: $name: $errors errors" >&2; exit 1; }
        RPS[$name]+="$rps "
        THIS[$name]=$rps
    done
    ratio=$(awk -v p="${THIS[protected]}" -v o="${THIS[open]}" 'BEGIN {printf "%.3f", p / o}')
    RATIOS+="$ratio "
    echo "round $round: unprotected ${THIS[open]} requests/s, protected ${THIS[protected]} requests/s, ratio $ratio"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
echo "tools/call after_sales_quote, 16 connections, $ROUNDS rounds of $DURATION each: medians unprotected $(echo "${RPS[open]}" | median) requests/s, protected (cached JWT) $(echo "${RPS[protected]}" | median) requests/s; median ratio protected / unprotected $(echo "$RATIOS" | median)"
