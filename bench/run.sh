#!/usr/bin/env bash
# The benchmark suite, one command: `bash bench/run.sh` (from anywhere).
#
# Measures the same one-tool `echo` server three ways — A ours (this
# framework), B rmcp (the official Rust SDK, from crates.io), C a plain hyper
# ceiling — over HTTP (wrk, 1/16/64 keep-alive connections), over stdio
# (100,000 pipelined calls, 64 in flight), the worker-count sweep (below),
# their footprint, the dispatch path (criterion) and the incremental build of a
# 50-tool crate, then writes bench/RESULTS.md. `ours` is built with the
# examples' feature set (`--features full`: mcp-runtime's redis, otel and auth,
# compiled in and not configured). Needs Linux, taskset, root or sudo without
# a password for `apt-get install wrk curl valgrind` (if one is missing), and ~45
# minutes. Only 127.0.0.1 is ever contacted.
#
# The worker-count sweep: for TOKIO_WORKER_THREADS = 1, 2, 16 and 64 (standing
# in for the cores of the machine), stdio (100,000 pipelined calls, 64 in
# flight, and cold start) for raw-stdio (the std-only floor), ours and rmcp,
# and for ours and raw-stdio built by the README's release recipe for Linux
# ("A smaller binary": glibc linked in, start-up's functions ordered first,
# relocations packed; `bash bench/order.sh build` builds them, with valgrind),
# and HTTP at 64 connections for ours, rmcp, the ceiling and the axum ceiling
# (`axum-ceiling`: the ceiling's work routed by a one-route axum Router).
#   bash bench/run.sh sweep     (or BENCH_ONLY=sweep) runs the sweep alone, into
#                               target/bench-results-sweep/, and writes its
#                               report to target/bench-results-sweep/RESULTS.md
#                               (bench/RESULTS.md is left alone)
#
# Knobs (defaults are the specified run): BENCH_DURATION=10s BENCH_ROUNDS=3
# BENCH_BUILD_ROUNDS=5 BENCH_QUIET_WAIT=90 BENCH_SKIP_BUILD_TIMES=1
# BENCH_CRITERION="--warm-up-time 1 --measurement-time 3"
# BENCH_SWEEP_WORKERS="1 2 16 64" BENCH_SWEEP_REQUESTS=100000
# BENCH_SWEEP_COLD_RUNS=20 BENCH_SWEEP_ROUNDS=$BENCH_ROUNDS
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
ONLY=${1:-${BENCH_ONLY:-all}}
case $ONLY in
    all | sweep) ;;
    *) echo "usage: bash bench/run.sh [sweep]   (or BENCH_ONLY=sweep)" >&2; exit 2 ;;
esac
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release
if [ "$ONLY" = sweep ]; then
    RAW=$TARGET/bench-results-sweep
    REPORT=$RAW/RESULTS.md
else
    RAW=$TARGET/bench-results
    REPORT=bench/RESULTS.md
fi
GEN=$TARGET/bench-gen
DURATION=${BENCH_DURATION:-10s}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=(1 16 64)
STDIO_REQUESTS=100000
IN_FLIGHT=64
LISTEN_STREAMS=1000
COLD_RUNS=20
# shellcheck disable=SC2206
WORKERS=(${BENCH_SWEEP_WORKERS:-1 2 16 64})
# 100,000: at the 300,000 requests/s the raw loop and ours reach, 20,000 took
# 65 ms, and one pause of the shared host moved a run by a fifth.
SWEEP_REQUESTS=${BENCH_SWEEP_REQUESTS:-100000}
SWEEP_COLD_RUNS=${BENCH_SWEEP_COLD_RUNS:-$COLD_RUNS}
SWEEP_ROUNDS=${BENCH_SWEEP_ROUNDS:-$ROUNDS}
FEATURES=full
BUILD_ROUNDS=${BENCH_BUILD_ROUNDS:-5}
CRITERION_ARGS=${BENCH_CRITERION:---warm-up-time 1 --measurement-time 3}
SERVER_CORE=1
LOAD_CORE=0
# Below Linux's ephemeral range (32768-60999 by default): the thousands of
# client sockets the footprint steps open must not take a server's port.
declare -A PORT=([ours]=29101 [rmcp]=29102 [ceiling]=29103 [axum]=29104)
declare -A EXE=([ours]=ours [rmcp]=rmcp-peer [ceiling]=ceiling [axum]=axum-ceiling [raw]=raw-stdio)
# The stdio servers of the sweep: ours and the raw loop also as the release
# recipe builds them (`bash bench/order.sh build` writes them there).
ORDER_DIR=$ROOT/target/bench-order
declare -A STDIO_BIN=([raw]=$BIN/raw-stdio [ours]=$BIN/ours [rmcp]=$BIN/rmcp-peer
    [raw-static]=$ORDER_DIR/raw-static [recipe]=$ORDER_DIR/ours-static-ordered-relr)

rm -rf "$RAW"
mkdir -p "$RAW"
RESULTS=$RAW/results.tsv
COMMANDS=$RAW/commands.txt
NOTES=$RAW/notes.txt
META=$RAW/meta.txt
: >"$RESULTS"
: >"$NOTES"
if [ "$ONLY" = sweep ]; then
    echo "bash bench/run.sh sweep   # runs everything below and writes ${REPORT#"$ROOT"/}" >"$COMMANDS"
else
    echo "bash bench/run.sh   # runs everything below and writes bench/RESULTS.md" >"$COMMANDS"
fi

log() { echo "[bench $(date +%T)] $*" >&2; }
# Runs a command and records it (once) in the list of exact commands.
cmd() {
    local line="" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=,@+%-]+$ ]]; then line+="$arg "; else line+="'${arg//\'/\'\\\'\'}' "; fi
    done
    line=${line% }
    line=${line//$ROOT\//}
    if [ -n "${SERVER_PID:-}" ]; then line=${line//" $SERVER_PID"/' $SERVER_PID'}; fi
    grep -qxF -- "$line" "$COMMANDS" || echo "$line" >>"$COMMANDS"
    "$@"
}
note() { echo "$*" >>"$NOTES"; }
compilers_running() { ps -eo comm= | grep -cE '^(rustc|clippy-driver|cc1|cc1plus|ld|rust-lld)$' || true; }
# Other work (compilers) on this 2-core machine disturbs the numbers: before
# each step, wait up to BENCH_QUIET_WAIT seconds (default 90) for it to
# finish, and note the step if it did not.
QUIET_WAIT=${BENCH_QUIET_WAIT:-90}
check_quiet() {
    local busy waited=0
    busy=$(compilers_running)
    while [ "$busy" -gt 0 ] && [ "$waited" -lt "$QUIET_WAIT" ]; do
        sleep 2
        waited=$((waited + 2))
        busy=$(compilers_running)
    done
    if [ "$waited" -gt 0 ]; then log "waited ${waited}s for other compilers to finish"; fi
    if [ "$busy" -gt 0 ]; then
        note "$1: $busy compiler process(es) of other work were running on this 2-core machine when it started; it may be disturbed."
    fi
}
# After a step: note it if other compilers were running at its end.
check_after() {
    local busy
    busy=$(compilers_running)
    if [ "$busy" -gt 0 ]; then
        note "$1: $busy compiler process(es) of other work were running on this 2-core machine when it ended; it may be disturbed."
    fi
}

SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap stop_server EXIT

ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# ------------------------------------------------------------------ tools
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
command -v curl >/dev/null || bash scripts/apt-install.sh run.sh curl || exit 1
# shellcheck source=wrk.sh
. bench/wrk.sh
wrk_ensure

# ------------------------------------------------------------------ build
log "building the peers and drivers (release)"
cmd cargo build --release -p mcp-bench --bins --features "$FEATURES"
log "building ours and the raw loop by the release recipe (bench/order.sh build)"
cmd bash bench/order.sh build
if [ "$ONLY" = all ]; then
    log "building the criterion bench"
    cmd cargo bench -p mcp-bench --bench dispatch --no-run
fi

# ------------------------------------------------------------------ machine
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "nproc: $(nproc)"
    echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "kernel: $(uname -sr)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "rustc: $(rustc --version)"
    echo "rmcp: $(grep -A1 '^name = "rmcp"$' Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p') (crates.io), features server, macros, schemars, transport-io, transport-streamable-http-server"
    echo "axum: $(grep -A1 '^name = "axum"$' Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p') (crates.io), features http1, tokio (the axum ceiling, D)"
    echo "load generator: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2) (Debian), 1 thread, pinned to core $LOAD_CORE; servers pinned to core $SERVER_CORE (taskset)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$([ -z "$(git status --porcelain -- mcp-runtime mcp-macros 2>/dev/null)" ] || echo ' + uncommitted changes in mcp-runtime/mcp-macros (the working tree was measured)')"
    echo "profile: release (opt-level 3, the workspace's defaults) for all the servers and the drivers"
    echo "features: \`cargo build --release -p mcp-bench --bins --features $FEATURES\`: ours links mcp-runtime with redis, otel and auth (the examples' feature set), none of them configured"
    echo "protocol: every request is a 2026-07-28 tools/call with _meta protocolVersion + clientCapabilities and the MCP-Protocol-Version, Mcp-Method, Mcp-Name headers; rmcp answers it natively (stateless Streamable HTTP, JSON responses; stdio without initialize)"
    if [ "$ONLY" = all ]; then
        echo "HTTP: $ROUNDS rounds, A/B/C alternating with the order rotating each round (ABC, BCA, CAB), $DURATION per cell after a 2 s warm-up at 64 connections; one curl request validated before timing; connections ${CONNS[*]}"
        echo "stdio: $ROUNDS rounds of $STDIO_REQUESTS pipelined tools/call with $IN_FLIGHT in flight (driver on core $LOAD_CORE, server on core $SERVER_CORE); cold start: $COLD_RUNS spawns each, unpinned"
    fi
    echo "worker-count sweep: $SWEEP_ROUNDS rounds; for TOKIO_WORKER_THREADS in ${WORKERS[*]}: stdio $SWEEP_REQUESTS pipelined tools/call with $IN_FLIGHT in flight (driver on core $LOAD_CORE, server on core $SERVER_CORE) and $SWEEP_COLD_RUNS cold starts (driver and server on core $SERVER_CORE) for raw-stdio, ours and rmcp, and for raw-stdio and ours built by the release recipe (static-pie, ordered, packed: bench/order.sh build); HTTP $DURATION at 64 connections after a 2 s warm-up for ours, rmcp, the ceiling and the axum ceiling (server on core $SERVER_CORE)"
    if [ "$ONLY" = all ]; then
        echo "builds: 1 clean build per crate in its own target dir, then $BUILD_ROUNDS rounds (ours, rmcp alternating) of editing one tool body and \`cargo build\` (dev profile)"
        echo "criterion: $CRITERION_ARGS"
    fi
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$META"

LUA=$RAW/post.lua
cmd "$BIN/driver" wrk-script >"$LUA"
BODY=$(sed -n 's/^wrk.body = \[\[\(.*\)\]\]$/\1/p' "$LUA")

# A command the servers start under (start_server): the sweep sets it to
# `env TOKIO_WORKER_THREADS=w`.
SERVER_ENV=()
start_server() { # name [port offset]: each phase has its own ports, so no socket of an earlier phase is in the way
    local name=$1 port=$((${PORT[$1]} + ${2:-0})) attempt
    for attempt in 1 2 3 4 5; do
        local line="${SERVER_ENV[*]:+${SERVER_ENV[*]} }taskset -c $SERVER_CORE $BIN/${EXE[$name]} --http 127.0.0.1:$port 2>>$RAW/$name.stderr &"
        line=${line//$ROOT\//}
        grep -qxF -- "$line" "$COMMANDS" || echo "$line" >>"$COMMANDS"
        ${SERVER_ENV[@]+"${SERVER_ENV[@]}"} taskset -c "$SERVER_CORE" "$BIN/${EXE[$name]}" --http "127.0.0.1:$port" 2>>"$RAW/$name.stderr" &
        SERVER_PID=$!
        for _ in $(seq 100); do
            if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
            if curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; then return 0; fi
            sleep 0.05
        done
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
        log "$name did not start on port $port (attempt $attempt), retrying"
        sleep 2
    done
    echo "$name did not start" >&2
    exit 1
}

validate() { # name [port offset]: one real request, checked before any timing
    local name=$1 port=$((${PORT[$1]} + ${2:-0})) out=$RAW/check-$1.json
    cmd curl -s -o "$out" -X POST "http://127.0.0.1:$port/mcp" \
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
        --data "$BODY"
    if ! "$BIN/driver" check "$out"; then
        echo "$name did not answer a real echo result: $(cat "$out")" >&2
        exit 1
    fi
}

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# ------------------------------------------------------------------ worker-count sweep
# Rows: sweep_stdio_* and sweep_cold_start_ms (raw, raw-static, ours, recipe,
# rmcp), sweep_http_* (ours, rmcp, ceiling, axum), with the worker count as
# the param.
sweep() {
    local round w name i port shift_by out line rps p50 p99 total errors
    local stdio_order=(raw raw-static ours recipe rmcp) order=(ours rmcp ceiling axum) this_round
    for round in $(seq "$SWEEP_ROUNDS"); do
        # The order of the peers rotates each round, as in the HTTP rounds.
        shift_by=$(((round - 1) % ${#stdio_order[@]}))
        this_round=("${stdio_order[@]:$shift_by}" "${stdio_order[@]:0:$shift_by}")
        for w in "${WORKERS[@]}"; do
            for name in "${this_round[@]}"; do
                log "sweep round $round, $w workers, stdio: $name"
                check_quiet "sweep round $round, $w workers, stdio, $name"
                cmd taskset -c "$LOAD_CORE" "$BIN/driver" stdio-load "$name" "$SWEEP_REQUESTS" "$IN_FLIGHT" \
                    --prefix sweep_ --param "$w" -- \
                    env TOKIO_WORKER_THREADS="$w" taskset -c "$SERVER_CORE" "${STDIO_BIN[$name]}" >>"$RESULTS"
                # Cold start: the driver on the server's core, which the server
                # inherits with TOKIO_WORKER_THREADS, so that no taskset or env
                # is exec'd between the spawn and the server.
                cmd env TOKIO_WORKER_THREADS="$w" taskset -c "$SERVER_CORE" "$BIN/driver" cold-start "$name" \
                    "$SWEEP_COLD_RUNS" --prefix sweep_ --param "$w" -- "${STDIO_BIN[$name]}" >>"$RESULTS"
                check_after "sweep round $round, $w workers, stdio, $name"
            done
        done
        shift_by=$(((round - 1) % ${#order[@]}))
        this_round=("${order[@]:$shift_by}" "${order[@]:0:$shift_by}")
        i=0
        for w in "${WORKERS[@]}"; do
            i=$((i + 1))
            SERVER_ENV=(env TOKIO_WORKER_THREADS="$w")
            for name in "${this_round[@]}"; do
                log "sweep round $round, $w workers, HTTP: $name"
                check_quiet "sweep round $round, $w workers, HTTP, $name"
                # Ports of their own: 29135 to 29150 for the default four counts.
                port=$((30 + 4 * i))
                start_server "$name" "$port"
                validate "$name" "$port"
                url="http://127.0.0.1:$((${PORT[$name]} + port))/mcp"
                taskset -c "$LOAD_CORE" wrk -t1 -c64 -d2s -s "$LUA" "$url" >/dev/null
                out=$(cmd taskset -c "$LOAD_CORE" wrk -t1 -c64 -d"$DURATION" -s "$LUA" "$url")
                line=$(grep '^WRKRESULT' <<<"$out")
                IFS=$'\t' read -r _ rps p50 p99 total errors <<<"$line"
                printf 'sweep_http_rps\t%s\t%s\t%s\n' "$name" "$w" "$rps" >>"$RESULTS"
                printf 'sweep_http_p99_us\t%s\t%s\t%s\n' "$name" "$w" "$p99" >>"$RESULTS"
                printf 'sweep_http_peak_rss_kib\t%s\t%s\t%s\n' "$name" "$w" \
                    "$(awk '/VmHWM/ { print $2 }' "/proc/$SERVER_PID/status")" >>"$RESULTS"
                if [ "$errors" != 0 ]; then note "sweep round $round, $w workers, HTTP, $name: $errors errors"; fi
                check_after "sweep round $round, $w workers, HTTP, $name"
                stop_server
            done
        done
        SERVER_ENV=()
    done
}

report() {
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$META"
    cmd "$BIN/driver" report "$RAW" "$REPORT" "$TARGET/criterion"
    log "wrote ${REPORT#"$ROOT"/}"
}

if [ "$ONLY" = sweep ]; then
    sweep
    report
    exit 0
fi

# ------------------------------------------------------------------ HTTP
ORDER=(ours rmcp ceiling)
for round in $(seq "$ROUNDS"); do
    # A/B/C alternate, and the order rotates each round (ABC, BCA, CAB).
    shift_by=$(((round - 1) % 3))
    this_round=("${ORDER[@]:$shift_by}" "${ORDER[@]:0:$shift_by}")
    for name in "${this_round[@]}"; do
        log "HTTP round $round: $name"
        check_quiet "HTTP round $round, $name"
        start_server "$name"
        validate "$name"
        url="http://127.0.0.1:${PORT[$name]}/mcp"
        # Warm-up, not recorded.
        taskset -c "$LOAD_CORE" wrk -t1 -c64 -d2s -s "$LUA" "$url" >/dev/null
        for c in "${CONNS[@]}"; do
            before=$(cpu_ticks "$SERVER_PID")
            out=$(cmd taskset -c "$LOAD_CORE" wrk -t1 -c"$c" -d"$DURATION" -s "$LUA" "$url")
            after=$(cpu_ticks "$SERVER_PID")
            line=$(grep '^WRKRESULT' <<<"$out")
            IFS=$'\t' read -r _ rps p50 p99 total errors <<<"$line"
            secs=${DURATION%s}
            printf 'http_rps\t%s\t%s\t%s\n' "$name" "$c" "$rps" >>"$RESULTS"
            printf 'http_p50_us\t%s\t%s\t%s\n' "$name" "$c" "$p50" >>"$RESULTS"
            printf 'http_p99_us\t%s\t%s\t%s\n' "$name" "$c" "$p99" >>"$RESULTS"
            printf 'http_errors\t%s\t%s\t%s\n' "$name" "$c" "$errors" >>"$RESULTS"
            printf 'http_requests\t%s\t%s\t%s\n' "$name" "$c" "$total" >>"$RESULTS"
            printf 'http_server_cpu_pct\t%s\t%s\t%s\n' "$name" "$c" \
                "$(awk -v a="$before" -v b="$after" -v s="$secs" 'BEGIN { print (b - a) / s }')" >>"$RESULTS"
            if [ "$errors" != 0 ]; then note "HTTP round $round, $name, $c conns: $errors errors"; fi
        done
        check_after "HTTP round $round, $name"
        printf 'http_peak_rss_kib\t%s\t64\t%s\n' "$name" \
            "$(awk '/VmHWM/ { print $2 }' "/proc/$SERVER_PID/status")" >>"$RESULTS"
        stop_server
    done
done

# ------------------------------------------------------------------ stdio
for round in $(seq "$ROUNDS"); do
    for name in ours rmcp; do
        log "stdio round $round: $name"
        check_quiet "stdio round $round, $name"
        cmd taskset -c "$LOAD_CORE" "$BIN/driver" stdio-load "$name" "$STDIO_REQUESTS" "$IN_FLIGHT" -- \
            taskset -c "$SERVER_CORE" "$BIN/${EXE[$name]}" >>"$RESULTS"
        check_after "stdio round $round, $name"
    done
done

sweep

# ------------------------------------------------------------------ footprint
for name in ours rmcp; do
    log "cold start: $name"
    check_quiet "cold start, $name"
    cmd "$BIN/driver" cold-start "$name" "$COLD_RUNS" -- "$BIN/${EXE[$name]}" >>"$RESULTS"
done
# The driver opens its 1,000 streams and connections from one address: the
# servers' cap per address (ours: 256 by default, MCP_MAX_CONNECTIONS_PER_PEER)
# is lifted for these two steps, which measure what each one holds.
SERVER_ENV=(env MCP_MAX_CONNECTIONS_PER_PEER=0)
for name in ours rmcp; do
    log "$LISTEN_STREAMS subscriptions/listen streams: $name"
    start_server "$name" 10
    cmd taskset -c "$LOAD_CORE" "$BIN/driver" listen "$name" "127.0.0.1:$((${PORT[$name]} + 10))" "$LISTEN_STREAMS" "$SERVER_PID" >>"$RESULTS"
    stop_server
done
for name in ours rmcp ceiling; do
    log "$LISTEN_STREAMS idle keep-alive connections: $name"
    start_server "$name" 20
    cmd taskset -c "$LOAD_CORE" "$BIN/driver" idle "$name" "127.0.0.1:$((${PORT[$name]} + 20))" "$LISTEN_STREAMS" "$SERVER_PID" >>"$RESULTS"
    stop_server
done
SERVER_ENV=()

cmd "$BIN/driver" sizes >>"$RESULTS"

# ------------------------------------------------------------------ criterion
log "criterion: the dispatch path"
check_quiet "criterion"
rm -rf "$TARGET/criterion/dispatch" "$TARGET/criterion/mrtr" "$TARGET/criterion/startup"
# shellcheck disable=SC2086
cmd cargo bench -p mcp-bench --bench dispatch -- $CRITERION_ARGS >"$RAW/criterion.txt" 2>&1
check_after "criterion"

# ------------------------------------------------------------------ build times
if [ "${BENCH_SKIP_BUILD_TIMES:-0}" != 1 ]; then
    log "generating the 50-tool crates under $GEN"
    rm -rf "$GEN"
    mkdir -p "$GEN"
    cmd "$BIN/driver" gen-crates "$GEN" mcp-runtime
    for name in ours rmcp; do
        cp Cargo.lock "$GEN/$name/Cargo.lock" # the same dependency versions as the workspace
    done
    timed_build() { # name metric
        local start end
        start=$(date +%s.%N)
        cmd env -C "$GEN/$1" CARGO_TARGET_DIR="$GEN/target-$1" cargo build -q >>"$RAW/gen-build.log" 2>&1
        end=$(date +%s.%N)
        printf '%s\t%s\t50\t%s\n' "$2" "$1" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" >>"$RESULTS"
    }
    for name in ours rmcp; do
        log "first build of the 50-tool crate: $name"
        check_quiet "first build, $name"
        timed_build "$name" build_full_secs
    done
    for round in $(seq "$BUILD_ROUNDS"); do
        for name in ours rmcp; do
            log "incremental build round $round: $name"
            check_quiet "incremental build round $round, $name"
            cmd "$BIN/driver" bump "$GEN/$name/src/main.rs"
            timed_build "$name" build_incremental_secs
            check_after "incremental build round $round, $name"
        done
    done
fi

# ------------------------------------------------------------------ report
report
