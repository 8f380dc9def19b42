#!/usr/bin/env bash
# Counts user-space instructions per request with valgrind's callgrind:
# repeatable on a noisy machine where wall-clock timings are not.
#
#   bash bench/callgrind.sh [ours|ceiling|ours-stdio|rmcp-stdio|raw-stdio]...
#                       (default: ours ceiling)
#   BENCH_FEATURES=mcp-runtime/otel bash bench/callgrind.sh ours
#                       ours with features of the runtime compiled in (and,
#                       with OTEL_* variables exported, configured);
#                       BENCH_FEATURES=full: the examples' set (redis, otel, auth)
#   TOKIO_WORKER_THREADS=1 bash bench/callgrind.sh ours-stdio
#                       the servers see the variable (printed as `workers`)
#   BENCH_CLIENT_META=1 bash bench/callgrind.sh ours-stdio
#                       every request carries the `clientInfo` and the
#                       capabilities clients send with each request
#
# Builds a profiling copy of the peers (release, line tables, frame pointers)
# in target/bench-prof.
# HTTP (ours, ceiling): starts each under callgrind, warms up 1 s with wrk
# (8 connections, the suite's request), zeroes the counters, loads it 4 s,
# dumps, and prints instructions per request (`callgrind_http` of
# bench/callgrind_lib.sh, which bench/guardrails.sh shares).
# stdio (NAME-stdio): runs the server under callgrind twice through
# `driver stdio-load` (stdin and stdout are pipes; 64 calls in flight), with
# 1,000 and then 21,000 `tools/call`s after the driver's first, and prints the
# difference of the two programs' totals over the 20,000 extra calls, so that
# start-up and exit cancel out.
# Annotate a dump with `callgrind_annotate --inclusive=yes <file>`.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=("$@")
[ ${#peers[@]} -eq 0 ] && peers=(ours ceiling)
# shellcheck source=callgrind_lib.sh
. bench/callgrind_lib.sh
callgrind_tools
# shellcheck source=wrk.sh
. bench/wrk.sh
wrk_ensure
callgrind_build_env
trap callgrind_stop EXIT
# The binary of a peer (NAME or NAME-stdio).
bin_of() {
  case $1 in
    raw-stdio) echo raw-stdio ;;
    rmcp-stdio) echo rmcp-peer ;;
    *-stdio) echo "${1%-stdio}" ;;
    *) echo "$1" ;;
  esac
}
bins=(); for p in "${peers[@]}"; do bins+=(--bin "$(bin_of "$p")"); done
features=(); [ -n "${BENCH_FEATURES:-}" ] && features=(--features "$BENCH_FEATURES")
cargo build -q --release -p mcp-bench "${features[@]}" "${bins[@]}" --bin driver
out=target/bench-results; mkdir -p "$out"
lua=$out/callgrind.lua
target/bench-prof/release/driver wrk-script > "$lua"
port=29400
stdio_counts=(1000 21000)
for p in "${peers[@]}"; do
  if [[ $p == *-stdio ]]; then
    totals=()
    for n in "${stdio_counts[@]}"; do
      file=$out/callgrind.$p.$n.out
      rm -f "$file"
      target/bench-prof/release/driver stdio-load "$p" "$n" 64 -- \
        valgrind --tool=callgrind --callgrind-out-file="$file" "target/bench-prof/release/$(bin_of "$p")" \
        > "$out/callgrind.$p.$n.tsv"
      totals+=("$(program_total "$file")")
    done
    extra=$((stdio_counts[1] - stdio_counts[0]))
    printf '%s\tworkers %s\trequests %s\tinstructions %s - %s\tinstructions/request %d\t%s\n' "$p" \
      "${TOKIO_WORKER_THREADS:-default}" "$extra" "${totals[1]}" "${totals[0]}" \
      $(((totals[1] - totals[0]) / extra)) "$file"
    continue
  fi
  port=$((port + 1))
  callgrind_http "$p" "$port" "$lua" "target/bench-prof/release/$p"
done
