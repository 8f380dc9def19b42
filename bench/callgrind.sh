#!/usr/bin/env bash
# Counts user-space instructions per HTTP request with valgrind's callgrind:
# repeatable on a noisy machine where wall-clock timings are not.
#
#   bash bench/callgrind.sh [ours|ceiling]... (default: ours ceiling)
#   BENCH_FEATURES=mcp-runtime/otel bash bench/callgrind.sh ours
#                       ours with features of the runtime compiled in (and,
#                       with OTEL_* variables exported, configured)
#
# Builds a profiling copy of the peers (release, line tables, frame pointers)
# in target/bench-prof, starts each under callgrind, warms up 1 s with wrk
# (8 connections, the suite's request), zeroes the counters, loads it 4 s,
# dumps, and prints instructions per request. Annotate the dump with
# `callgrind_annotate --inclusive=yes <file>`.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=("$@")
[ ${#peers[@]} -eq 0 ] && peers=(ours ceiling)
for tool in valgrind callgrind_control callgrind_annotate curl; do
  command -v "$tool" >/dev/null || { echo "callgrind.sh: needs $tool (apt-get install valgrind curl)" >&2; exit 1; }
done
# shellcheck source=wrk.sh
. bench/wrk.sh
wrk_ensure
export CARGO_TARGET_DIR=target/bench-prof CARGO_PROFILE_RELEASE_DEBUG=line-tables-only RUSTFLAGS="-C force-frame-pointers=yes"
bins=(); for p in "${peers[@]}"; do bins+=(--bin "$p"); done
features=(); [ -n "${BENCH_FEATURES:-}" ] && features=(--features "$BENCH_FEATURES")
cargo build -q --release -p mcp-bench "${features[@]}" "${bins[@]}" --bin driver
out=target/bench-results; mkdir -p "$out"
lua=$out/callgrind.lua
target/bench-prof/release/driver wrk-script > "$lua"
port=29400
for p in "${peers[@]}"; do
  port=$((port + 1))
  file=$out/callgrind.$p.out
  rm -f "$file"*
  valgrind --tool=callgrind --callgrind-out-file="$file" "target/bench-prof/release/$p" --http "127.0.0.1:$port" \
    2> "$out/callgrind.$p.stderr" &
  vg=$!
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
  wrk -t1 -c8 -d1s -s "$lua" "http://127.0.0.1:$port/mcp" > /dev/null
  callgrind_control -z "$vg" > /dev/null
  requests=$(wrk -t1 -c8 -d4s -s "$lua" "http://127.0.0.1:$port/mcp" | awk -F'\t' '/^WRKRESULT/{print $5}')
  callgrind_control -d "$vg" > /dev/null
  sleep 1
  kill -9 "$vg" 2> /dev/null || true
  wait "$vg" 2> /dev/null || true
  dump=$(ls -t "$file".* | head -1)
  total=$(callgrind_annotate "$dump" 2> /dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}')
  printf '%s\trequests %s\tinstructions/request %d\t%s\n' "$p" "$requests" $((total / requests)) "$dump"
done
