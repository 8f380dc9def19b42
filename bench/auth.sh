#!/usr/bin/env bash
# The cost of authorization: requests/s of a protected `tools/call` (a JWT from a real
# authorization server, verified once and then served from the verifier's cache) against
# the same call unprotected, same binary (examples/after-sales, release), same run.
# wrk, 1 thread, 16 keep-alive connections, BENCH_DURATION (5s) per round, BENCH_ROUNDS (9)
# rounds, each timing the two servers back to back; servers pinned to core 1, wrk to core 0
# (taskset). A shared machine's throughput drifts from minute to minute: the figure is the
# median of the rounds' own ratios, each taken seconds apart, and beside it the ratio of the
# servers' CPU time per request (from /proc), which the drift does not move.
# Starts oidc-provider with scripts/auth-server.sh (installs it when missing). Prints the
# median of each and the ratio protected / unprotected.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DURATION=${BENCH_DURATION:-5s}
ROUNDS=${BENCH_ROUNDS:-9}
# shellcheck source=wrk.sh
. "$ROOT/bench/wrk.sh"
wrk_ensure
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-auth.XXXXXX")
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
    bash scripts/auth-server.sh down "$work/as" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --release --example after-sales
exe=target/release/examples/after-sales
issuer=$(bash scripts/auth-server.sh up "$work/as" 2>"$work/as.log") ||
    { cat "$work/as.log" >&2; echo "auth.sh: the authorization server did not start" >&2; exit 1; }
declare -A PORT=([open]=29201 [protected]=29202)
declare -A PID=()
start() { # NAME [env...]
    local name=$1
    shift
    env "$@" taskset -c 1 "$exe" --http "127.0.0.1:${PORT[$name]}" 2>"$work/$name.log" &
    pids+=($!)
    PID[$name]=$!
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

args='{"order_id":"ORD-1001"}'
wrk_tools_call after_sales_quote "$args" >"$work/open.lua"
wrk_tools_call after_sales_quote "$args" "wrk.headers[\"Authorization\"] = \"Bearer $token\"" >"$work/protected.lua"

# Both answer the call (and the protected one refuses it without the token) before timing.
for name in open protected; do
    taskset -c 0 wrk -t1 -c16 -d2s -s "$work/$name.lua" "http://127.0.0.1:${PORT[$name]}/mcp" | grep -q $'^WRK\t[0-9]*\t[0-9.]*\t[0-9.]*\t0\t' ||
        { echo "auth.sh: $name: the warm-up had errors" >&2; exit 1; }
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$resource" -H 'content-type: application/json' -d '{}')
[ "$code" = 401 ] || { echo "auth.sh: the protected server answered $code without a token" >&2; exit 1; }

# The server's CPU time (user + system, clock ticks) from /proc: CPU per request does not
# drift with what else the machine runs, as requests/s does.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK_US=$((1000000 / $(getconf CLK_TCK)))
declare -A RPS=([open]="" [protected]="") CPU=([open]="" [protected]="")
RATIOS="" CPU_RATIOS=""
for round in $(seq 1 "$ROUNDS"); do
    declare -A THIS=() THIS_CPU=()
    for name in open protected; do
        before=$(cpu_ticks "${PID[$name]}")
        line=$(taskset -c 0 wrk -t1 -c16 -d"$DURATION" -s "$work/$name.lua" "http://127.0.0.1:${PORT[$name]}/mcp" | grep $'^WRK')
        after=$(cpu_ticks "${PID[$name]}")
        IFS=$'\t' read -r _ rps _ _ errors requests <<<"$line"
        [ "$errors" = 0 ] || { echo "auth.sh: $name: $errors errors" >&2; exit 1; }
        RPS[$name]+="$rps "
        THIS[$name]=$rps
        THIS_CPU[$name]=$(awk -v t=$((after - before)) -v u="$TICK_US" -v n="$requests" 'BEGIN {printf "%.2f", t * u / n}')
        CPU[$name]+="${THIS_CPU[$name]} "
    done
    ratio=$(awk -v p="${THIS[protected]}" -v o="${THIS[open]}" 'BEGIN {printf "%.3f", p / o}')
    cpu_ratio=$(awk -v p="${THIS_CPU[protected]}" -v o="${THIS_CPU[open]}" 'BEGIN {printf "%.3f", o / p}')
    RATIOS+="$ratio "
    CPU_RATIOS+="$cpu_ratio "
    echo "round $round: unprotected ${THIS[open]} requests/s (${THIS_CPU[open]} us CPU each), protected ${THIS[protected]} requests/s (${THIS_CPU[protected]} us CPU each), ratio $ratio (by CPU $cpu_ratio)"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
echo "tools/call after_sales_quote, 16 connections, $ROUNDS rounds of $DURATION each: medians unprotected $(echo "${RPS[open]}" | median) requests/s ($(echo "${CPU[open]}" | median) us CPU per request), protected (cached JWT) $(echo "${RPS[protected]}" | median) requests/s ($(echo "${CPU[protected]}" | median) us CPU per request); median ratio protected / unprotected: $(echo "$RATIOS" | median) by requests/s, $(echo "$CPU_RATIOS" | median) by server CPU per request"
