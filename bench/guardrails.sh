#!/usr/bin/env bash
# What the server's guardrails cost on the `echo` path, and how it sheds load:
#
#   bash bench/guardrails.sh          (from anywhere; about 4 minutes plus the build)
#
# Needs Linux, valgrind, curl, taskset, and wrk (installed from Debian's
# packages when missing). Only 127.0.0.1 is contacted. Builds `guarded` and
# `driver` like bench/callgrind.sh (release, line tables, frame pointers, in
# target/bench-prof: the two scripts share the build) and runs one binary,
# `guarded` (bench/src/bin/guarded.rs: the `echo` tool of `ours`, plus `nap`,
# under `mcp_runtime::main!()`), in six configurations set from the
# environment as for any `main!` binary (the four variables are unset first,
# so the caller's environment does not leak in):
#
#   off         no guardrail
#   timeout     MCP_TOOL_TIMEOUT=30               every tool call runs under a 30 s timeout
#   rate        MCP_RATE_LIMIT=1000000/s          a rate limit per caller, in memory: so
#                                                 high nothing is refused, but every call is checked
#   per-caller  MCP_MAX_CALLS_PER_CALLER=100000   calls in progress per caller: a counted place per call
#   in-flight   MCP_MAX_IN_FLIGHT=100000          HTTP requests in flight counted (503 past it)
#   all         the four together
#
# The numbers:
#   instructions/request  user-space instructions per `tools/call` of `echo`
#                         over HTTP, counted with callgrind exactly as
#                         bench/callgrind.sh counts `ours` (`callgrind_http`
#                         of bench/callgrind_lib.sh: warm up 1 s with wrk, 8
#                         connections, zero, load 4 s, dump, program total
#                         over wrk's requests). Far steadier than wall clock,
#                         but not exact: it moves by some hundreds from run to
#                         run (more when other work shares the cores, which
#                         changes how many requests each wake-up serves).
#                         "Δ vs off" is a configuration's extra instructions
#                         per request, and in % of off's.
#   req/s (median)        wrk, one thread, 8 keep-alive connections, 5 s after
#                         a 1 s warm-up, the same wrk script (`driver
#                         wrk-script`), against `guarded` not under valgrind,
#                         server pinned to core 1 (so one tokio worker) and
#                         wrk to core 0 (taskset); the six servers run side by
#                         side, idle but for the one being loaded;
#                         3 rounds, each going through the six configurations
#                         in turn, and the median of the rounds; "ratio vs
#                         off": that median over off's. Wall clock: it moves
#                         with whatever else runs on the machine.
#   shedding              `guarded` with MCP_MAX_IN_FLIGHT=8 under 10x
#                         overload: `driver shed` runs 80 connections, each
#                         calling `nap` (100 ms) back to back for 10 s without
#                         waiting the Retry-After. The 503s' p50/p99 (how fast
#                         a refused caller is told), the admitted rate (200s
#                         per second; at most 8 / 0.1 s = 80/s) and the 503s
#                         per second (bounded by the two cores, which the
#                         driver shares).
#
# Writes target/bench-results/guardrails.tsv (raw rows `metric server param
# value`: callgrind's per configuration, wrk's per round, the driver's
# `shed_*`) and target/bench-results/guardrails.md (the table, also printed).
# Knobs: BENCH_ROUNDS (3), BENCH_DURATION (5s) for the req/s part.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-5s}
# shellcheck source=callgrind_lib.sh
. bench/callgrind_lib.sh
callgrind_tools
command -v taskset >/dev/null || { echo "guardrails.sh: needs taskset (util-linux)" >&2; exit 1; }
# shellcheck source=wrk.sh
. bench/wrk.sh
wrk_ensure
callgrind_build_env
cargo build -q --release -p mcp-bench --bin guarded --bin driver
BIN=target/bench-prof/release
out=target/bench-results
mkdir -p "$out"
export CALLGRIND_OUT=$out
tsv=$out/guardrails.tsv
md=$out/guardrails.md
lua=$out/guardrails.lua
"$BIN/driver" wrk-script > "$lua"
: > "$tsv"

CONFIGS=(off timeout rate per-caller in-flight all)
declare -A SETTINGS=(
  [off]=""
  [timeout]="MCP_TOOL_TIMEOUT=30"
  [rate]="MCP_RATE_LIMIT=1000000/s"
  [per-caller]="MCP_MAX_CALLS_PER_CALLER=100000"
  [in-flight]="MCP_MAX_IN_FLIGHT=100000"
  [all]="MCP_TOOL_TIMEOUT=30 MCP_RATE_LIMIT=1000000/s MCP_MAX_CALLS_PER_CALLER=100000 MCP_MAX_IN_FLIGHT=100000"
)
# The arguments of `env` for a configuration: the four unset, then its own.
env_args() {
  ENV_ARGS=(-u MCP_TOOL_TIMEOUT -u MCP_RATE_LIMIT -u MCP_MAX_CALLS_PER_CALLER -u MCP_MAX_IN_FLIGHT)
  local setting
  for setting in ${SETTINGS[$1]}; do ENV_ARGS+=("$setting"); done
}

# Servers outside callgrind, by configuration (and `shed`); all stopped on exit.
declare -A PID=()
stop_all() {
  callgrind_stop
  local p
  for p in "${PID[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${PID[@]}"; do wait "$p" 2> /dev/null || true; done
  PID=()
}
trap stop_all EXIT

port=29500
declare -A PORT=()
# Starts `guarded` pinned to core 1 with the environment ENV_ARGS, as NAME.
start() {
  local name=$1
  port=$((port + 1))
  PORT[$name]=$port
  env "${ENV_ARGS[@]}" taskset -c 1 "$BIN/guarded" --http "127.0.0.1:$port" 2> "$out/guardrails.$name.stderr" &
  PID[$name]=$!
  for _ in $(seq 1 100); do
    kill -0 "${PID[$name]}" 2> /dev/null || { cat "$out/guardrails.$name.stderr" >&2; echo "guardrails.sh: $name did not start" >&2; exit 1; }
    curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
    sleep 0.05
  done
  echo "guardrails.sh: $name did not answer on port $port" >&2
  exit 1
}
# One real `echo` call, checked.
validate() {
  local name=$1 body=$out/guardrails.check.json
  curl -s -o "$body" -X POST "http://127.0.0.1:${PORT[$name]}/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
    --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  "$BIN/driver" check "$body" || { echo "guardrails.sh: $name: not an echo result: $(cat "$body")" >&2; exit 1; }
}
row() { printf '%s\tguarded\t%s\t%s\n' "$@" >> "$tsv"; }
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- a. instructions per request
echo "== callgrind: instructions per echo request over HTTP" >&2
declare -A INSNS=()
for c in "${CONFIGS[@]}"; do
  env_args "$c"
  port=$((port + 1))
  callgrind_http "guarded-$c" "$port" "$lua" "$BIN/guarded" "${ENV_ARGS[@]}" >&2
  [ "$CALLGRIND_ERRORS" = 0 ] || { echo "guardrails.sh: $c: wrk saw $CALLGRIND_ERRORS errors under callgrind" >&2; exit 1; }
  INSNS[$c]=$CALLGRIND_PER_REQUEST
  row guard_instructions_per_request "$c" "$CALLGRIND_PER_REQUEST"
  row guard_callgrind_requests "$c" "$CALLGRIND_REQUESTS"
done

# ---------------------------------------------------------------- b. requests per second
echo "== wrk: requests/s, 8 connections, $ROUNDS rounds of $DURATION" >&2
for c in "${CONFIGS[@]}"; do
  env_args "$c"
  start "$c"
  validate "$c"
done
declare -A RPS=()
for round in $(seq 1 "$ROUNDS"); do
  for c in "${CONFIGS[@]}"; do
    url="http://127.0.0.1:${PORT[$c]}/mcp"
    taskset -c 0 wrk -t1 -c8 -d1s -s "$lua" "$url" > /dev/null
    line=$(taskset -c 0 wrk -t1 -c8 -d"$DURATION" -s "$lua" "$url" | grep '^WRKRESULT')
    IFS=$'\t' read -r _ rps p50 p99 requests errors <<< "$line"
    [ "$errors" = 0 ] || { echo "guardrails.sh: $c: wrk saw $errors errors" >&2; exit 1; }
    RPS[$c]+="$rps "
    row guard_rps "$c" "$rps"
    row guard_p50_us "$c" "$p50"
    row guard_p99_us "$c" "$p99"
    printf 'round %s\t%-10s\t%s req/s\n' "$round" "$c" "$rps" >&2
  done
done
stop_all

# ---------------------------------------------------------------- c. shedding
echo "== shedding: MCP_MAX_IN_FLIGHT=8, 80 connections calling nap (100 ms) for 10 s" >&2
ENV_ARGS=(-u MCP_TOOL_TIMEOUT -u MCP_RATE_LIMIT -u MCP_MAX_CALLS_PER_CALLER MCP_MAX_IN_FLIGHT=8)
start shed
shed_rows=$(taskset -c 0 "$BIN/driver" shed "127.0.0.1:${PORT[shed]}" 80 10 100) ||
  { printf '%s\n' "$shed_rows" >&2; echo "guardrails.sh: driver shed failed" >&2; exit 1; }
stop_all
printf '%s\n' "$shed_rows" >> "$tsv"
shed_value() { awk -F'\t' -v m="$1" '$1 == m { print $4 }' <<< "$shed_rows"; }
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- d. the table
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
commas() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|[,.]\)/\1,\2\3/' -e 'ta' <<< "$1"; }
{
  echo "| configuration | instructions/request | Δ vs off | req/s (median) | ratio vs off |"
  echo "|---|---:|---:|---:|---:|"
  off_rps=$(median <<< "${RPS[off]}")
  for c in "${CONFIGS[@]}"; do
    i=${INSNS[$c]}
    d=$((i - INSNS[off]))
    pct=$(awk -v d="$d" -v o="${INSNS[off]}" 'BEGIN { printf "%+.1f%%", 100 * d / o }')
    r=$(median <<< "${RPS[$c]}")
    ratio=$(awk -v r="$r" -v o="$off_rps" 'BEGIN { printf "%.3f", r / o }')
    case $c in off) settings=none ;; all) settings="the four above" ;; *) settings="\`${SETTINGS[$c]}\`" ;; esac
    printf '| %s (%s) | %s | %s (%s) | %s | %s |\n' "$c" "$settings" "$(commas "$i")" \
      "$(commas "$(printf '%+d' "$d")")" "$pct" "$(commas "$(printf '%.0f' "$r")")" "$ratio"
  done
  echo
  printf 'Shedding (MCP_MAX_IN_FLIGHT=8; 80 connections each calling `nap` 100 ms back to back for 10 s, 10x what may be in flight): '
  printf '503 p50 %.2f ms, p99 %.2f ms; admitted %.1f/s (at most 80/s), 200 p50 %.1f ms; %s 503s/s (%s 200s, %s 503s).\n' \
    "$(shed_value shed_503_p50_ms)" "$(shed_value shed_503_p99_ms)" "$(shed_value shed_admitted_rps)" "$(shed_value shed_200_p50_ms)" \
    "$(commas "$(printf '%.0f' "$(shed_value shed_503_rps)")")" "$(shed_value shed_200_count)" "$(commas "$(shed_value shed_503_count)")"
  echo
  echo "instructions/request: callgrind, 8 connections, 4 s (bench/callgrind_lib.sh); req/s: wrk, 8 connections, median of $ROUNDS rounds of $DURATION, server on core 1, wrk on core 0; load average $load_start at the start, $load_end at the end."
} > "$md"
cat "$md"
