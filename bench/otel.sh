#!/usr/bin/env bash
# The cost of OpenTelemetry, and a collector that is down or stuck: requests/s, p99 and the
# server's CPU time per request of a `tools/call` of `greet` on examples/everything (release,
# every feature compiled in), in four settings, same binary, same run:
#   off      no OTEL_* variable: nothing exported, no metric recorded
#   export   spans and metrics exported to an OTLP/HTTP sink that answers 200 (bench/otlp_sink.py)
#   refused  the endpoint is a closed port: every export fails at once
#   hanging  the endpoint accepts and never answers: every export waits out its timeout (10 s)
# wrk, 1 thread, 16 keep-alive connections, BENCH_DURATION (5s) per setting, BENCH_ROUNDS (3)
# rounds; servers pinned to core 1, wrk to core 0. Prints one line per setting (medians) with
# its ratio to `off`. Each run is bounded: wrk's duration, then SIGTERM.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DURATION=${BENCH_DURATION:-5s}
ROUNDS=${BENCH_ROUNDS:-3}
# shellcheck source=wrk.sh
. "$ROOT/bench/wrk.sh"
wrk_ensure
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-otel.XXXXXX")
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --release --example everything
exe=target/release/examples/everything
wrk_tools_call greet '{"name":"Ada"}' > "$work/call.lua"
python3 bench/otlp_sink.py 29311 accept 2>"$work/sink-accept.log" & pids+=($!)
python3 bench/otlp_sink.py 29312 hang 2>"$work/sink-hang.log" & pids+=($!)
sleep 0.5

settings=(off export refused hanging)
endpoint() {
    case $1 in
        off) echo "" ;;
        export) echo "http://127.0.0.1:29311" ;;
        refused) echo "http://127.0.0.1:29313" ;;
        hanging) echo "http://127.0.0.1:29312" ;;
    esac
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
declare -A RPS=() P99=() CPU=()
for round in $(seq 1 "$ROUNDS"); do
    for s in "${settings[@]}"; do
        port=29320
        ep=$(endpoint "$s")
        if [ -n "$ep" ]; then
            OTEL_EXPORTER_OTLP_ENDPOINT="$ep" OTEL_BSP_SCHEDULE_DELAY=200 OTEL_METRIC_EXPORT_INTERVAL=1000 \
                taskset -c 1 "$exe" --http "127.0.0.1:$port" 2>"$work/$s.log" &
        else
            taskset -c 1 "$exe" --http "127.0.0.1:$port" 2>"$work/$s.log" &
        fi
        pid=$!
        for _ in $(seq 1 100); do grep -q "MCP server on Streamable HTTP" "$work/$s.log" 2>/dev/null && break; sleep 0.1; done
        taskset -c 0 wrk -t1 -c16 -d1s -s "$work/call.lua" "http://127.0.0.1:$port/mcp" >/dev/null
        before=$(cpu_ticks "$pid")
        line=$(taskset -c 0 wrk -t1 -c16 -d"$DURATION" -s "$work/call.lua" "http://127.0.0.1:$port/mcp" | grep '^WRK')
        after=$(cpu_ticks "$pid")
        kill -TERM "$pid"
        wait "$pid" 2>/dev/null || true
        IFS=$'\t' read -r _ rps _ p99 errors requests <<<"$line"
        [ "$errors" = 0 ] || { echo "otel.sh: $s: $errors errors" >&2; exit 1; }
        # Clock ticks (1/100 s) to microseconds per request.
        cpu=$(awk -v t=$((after - before)) -v n="$requests" 'BEGIN{printf "%.2f", t * 10000 / n}')
        RPS[$s]+="$rps "; P99[$s]+="$p99 "; CPU[$s]+="$cpu "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
off=$(echo "${RPS[off]}" | median)
off_cpu=$(echo "${CPU[off]}" | median)
for s in "${settings[@]}"; do
    rps=$(echo "${RPS[$s]}" | median); p99=$(echo "${P99[$s]}" | median); cpu=$(echo "${CPU[$s]}" | median)
    printf 'otel %-8s %8s req/s  p99 %6s ms  cpu %6s us/req  ratio %s  cpu ratio %s\n' "$s" "$rps" "$p99" "$cpu" \
        "$(awk -v a="$rps" -v b="$off" 'BEGIN{printf "%.3f", a / b}')" \
        "$(awk -v a="$cpu" -v b="$off_cpu" 'BEGIN{printf "%.3f", a / b}')"
done
grep -h "otlp_sink" "$work"/sink-*.log 2>/dev/null || true
