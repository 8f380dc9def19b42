#!/usr/bin/env bash
# The cost of a proxied call: requests/s and p99 of `tools/call echo` served by the echo server
# (bench/src/bin/ours.rs, release) directly over Streamable HTTP, and through examples/gateway
# (release) in front of it: the upstream over stdio (a child of the gateway), and over HTTP (the
# direct server). wrk, 1 thread, 16 keep-alive connections, BENCH_DURATION (5s) per round,
# BENCH_ROUNDS (5) rounds, each timing the three back to back; the servers (gateway and upstream
# alike) pinned to core 1, wrk to core 0 (taskset). Beside requests/s, the servers' CPU time per
# request (from /proc; a proxied call's is the gateway's plus its upstream's), which the drift of
# a shared machine does not move. Prints each round and the medians, with the ratios to direct.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DURATION=${BENCH_DURATION:-5s}
ROUNDS=${BENCH_ROUNDS:-5}
# shellcheck source=wrk.sh
. "$ROOT/bench/wrk.sh"
wrk_ensure
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-gateway.XXXXXX")
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --release -p mcp-bench --bin ours
cargo build -q --release --example gateway
target=${CARGO_TARGET_DIR:-target}
ours=$ROOT/$target/release/ours
gateway=$ROOT/$target/release/examples/gateway
case "$target" in /*) ours=$target/release/ours; gateway=$target/release/examples/gateway ;; esac

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
declare -A PORT PID
PORT[direct]=$(free_port)
taskset -c 1 "$ours" --http "127.0.0.1:${PORT[direct]}" 2>"$work/direct.log" &
PID[direct]=$!; pids+=("$!")
printf '{"mcpServers": {"ours": {"command": "%s", "prefix": ""}}}\n' "$ours" >"$work/stdio.json"
PORT[stdio]=$(free_port)
taskset -c 1 "$gateway" --config "$work/stdio.json" --http "127.0.0.1:${PORT[stdio]}" 2>"$work/stdio.log" &
PID[stdio]=$!; pids+=("$!")
printf '{"mcpServers": {"ours": {"url": "http://127.0.0.1:%s/mcp", "prefix": ""}}}\n' "${PORT[direct]}" >"$work/http.json"
PORT[http]=$(free_port)
taskset -c 1 "$gateway" --config "$work/http.json" --http "127.0.0.1:${PORT[http]}" 2>"$work/http.log" &
PID[http]=$!; pids+=("$!")

wrk_tools_call echo '{"text":"hello"}' >"$work/echo.lua"
for name in direct stdio http; do
    ok=""
    for _ in $(seq 100); do
        if taskset -c 0 wrk -t1 -c16 -d1s -s "$work/echo.lua" "http://127.0.0.1:${PORT[$name]}/mcp" 2>/dev/null |
            grep -q $'^WRK\t[0-9]*\t[0-9.]*\t[0-9.]*\t0\t'; then ok=1; break; fi
        sleep 0.2
    done
    [ -n "$ok" ] || { echo "gateway.sh: $name does not serve echo without errors"; tail -5 "$work/$name.log"; exit 1; } >&2
done

# CPU ticks (user + system) of a process and its children (the stdio upstream).
cpu_ticks() {
    local total=0 p
    for p in "$1" $(pgrep -P "$1" || true); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
    echo "$total"
}
cpu_of() { # the servers a name's calls go through
    case "$1" in
        direct) cpu_ticks "${PID[direct]}" ;;
        stdio) cpu_ticks "${PID[stdio]}" ;;
        http) echo $(( $(cpu_ticks "${PID[http]}") + $(cpu_ticks "${PID[direct]}") )) ;;
    esac
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))
declare -A RPS P99 CPU
for round in $(seq 1 "$ROUNDS"); do
    line_out="round $round:"
    for name in direct stdio http; do
        before=$(cpu_of "$name")
        line=$(taskset -c 0 wrk -t1 -c16 -d"$DURATION" -s "$work/echo.lua" "http://127.0.0.1:${PORT[$name]}/mcp" | grep $'^WRK')
        after=$(cpu_of "$name")
        IFS=$'\t' read -r _ rps _ p99 errors requests <<<"$line"
        [ "$errors" = 0 ] || { echo "gateway.sh: $name: $errors errors" >&2; exit 1; }
        cpu=$(awk -v t=$((after - before)) -v u="$TICK_US" -v n="$requests" 'BEGIN {printf "%.1f", t * u / n}')
        RPS[$name]+="$rps "; P99[$name]+="$p99 "; CPU[$name]+="$cpu "
        line_out+=" $name $rps req/s p99 $p99 ms ${cpu} us CPU;"
    done
    echo "$line_out"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
d_rps=$(echo "${RPS[direct]}" | median); d_cpu=$(echo "${CPU[direct]}" | median)
echo "tools/call echo, 16 connections, $ROUNDS rounds of $DURATION (medians):"
for name in direct stdio http; do
    rps=$(echo "${RPS[$name]}" | median); p99=$(echo "${P99[$name]}" | median); cpu=$(echo "${CPU[$name]}" | median)
    echo "  $name: $rps requests/s (x$(awk -v a="$rps" -v b="$d_rps" 'BEGIN {printf "%.2f", a / b}') of direct), p99 $p99 ms, $cpu us server CPU per request (x$(awk -v a="$cpu" -v b="$d_cpu" 'BEGIN {printf "%.2f", a / b}'))"
done
