# The callgrind measurement of an HTTP peer, shared by bench/callgrind.sh and
# bench/guardrails.sh. Sourced by them, never run.
#
# callgrind_tools          installs valgrind (callgrind_control and
#                          callgrind_annotate come with it) and curl from
#                          Debian's packages when missing
#                          (scripts/apt-install.sh); exits if it cannot
# callgrind_build_env      exports the profiling build's settings (release,
#                          line tables, frame pointers, in target/bench-prof):
#                          the scripts that source this file share one build
# program_total FILE       the total instructions of a callgrind dump
# callgrind_http LABEL PORT LUA BIN [ENV...]
#                          starts `BIN --http 127.0.0.1:PORT` under callgrind
#                          (through `env ENV...`: NAME=VALUE sets a variable,
#                          `-u NAME` unsets one), warms it up 1 s with wrk (one
#                          thread, 8 connections, the wrk script LUA of
#                          `driver wrk-script`), zeroes the counters, loads it
#                          4 s, dumps, kills it, and prints
#                          LABEL <tab> requests N <tab> instructions/request I <tab> DUMP
#                          (I: the dump's program total over wrk's N requests).
#                          Sets CALLGRIND_REQUESTS, CALLGRIND_ERRORS (wrk's
#                          errors in the 4 s), CALLGRIND_TOTAL,
#                          CALLGRIND_PER_REQUEST and CALLGRIND_DUMP; files go
#                          to $CALLGRIND_OUT (default target/bench-results):
#                          callgrind.LABEL.out.N (the dumps) and
#                          callgrind.LABEL.stderr (the server's stderr).
# callgrind_stop           kills the server callgrind_http is running, if any
#                          (CALLGRIND_PID): for an EXIT trap

callgrind_tools() {
  local tool missing=()
  for tool in valgrind callgrind_control callgrind_annotate curl; do
    command -v "$tool" >/dev/null && continue
    case $tool in curl) missing+=(curl) ;; *) [[ " ${missing[*]} " == *" valgrind "* ]] || missing+=(valgrind) ;; esac
  done
  [ ${#missing[@]} -eq 0 ] && return
  bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/apt-install.sh" "${0##*/}" "${missing[@]}" || exit 1
}

callgrind_build_env() {
  export CARGO_TARGET_DIR=target/bench-prof CARGO_PROFILE_RELEASE_DEBUG=line-tables-only RUSTFLAGS="-C force-frame-pointers=yes"
}

# Total instructions of a callgrind dump.
program_total() { callgrind_annotate "$1" 2> /dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}'; }

CALLGRIND_PID=
callgrind_stop() {
  if [ -n "$CALLGRIND_PID" ]; then
    kill -9 "$CALLGRIND_PID" 2> /dev/null || true
    wait "$CALLGRIND_PID" 2> /dev/null || true
    CALLGRIND_PID=
  fi
}

callgrind_http() {
  local label=$1 port=$2 lua=$3 bin=$4
  shift 4
  local out=${CALLGRIND_OUT:-target/bench-results}
  local file=$out/callgrind.$label.out result dump
  rm -f "$file"*
  env "$@" valgrind --tool=callgrind --callgrind-out-file="$file" "$bin" --http "127.0.0.1:$port" \
    2> "$out/callgrind.$label.stderr" &
  CALLGRIND_PID=$!
  for _ in $(seq 1 100); do
    kill -0 "$CALLGRIND_PID" 2> /dev/null || { cat "$out/callgrind.$label.stderr" >&2; echo "$label: the server exited" >&2; return 1; }
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.2
  done
  wrk -t1 -c8 -d1s -s "$lua" "http://127.0.0.1:$port/mcp" > /dev/null
  callgrind_control -z "$CALLGRIND_PID" > /dev/null
  result=$(wrk -t1 -c8 -d4s -s "$lua" "http://127.0.0.1:$port/mcp" | awk -F'\t' '/^WRKRESULT/')
  CALLGRIND_REQUESTS=$(cut -f5 <<< "$result")
  CALLGRIND_ERRORS=$(cut -f6 <<< "$result")
  callgrind_control -d "$CALLGRIND_PID" > /dev/null
  sleep 1
  callgrind_stop
  dump=$(ls -t "$file".* | head -1)
  CALLGRIND_DUMP=$dump
  CALLGRIND_TOTAL=$(program_total "$dump")
  CALLGRIND_PER_REQUEST=$((CALLGRIND_TOTAL / CALLGRIND_REQUESTS))
  printf '%s\trequests %s\tinstructions/request %d\t%s\n' "$label" "$CALLGRIND_REQUESTS" "$CALLGRIND_PER_REQUEST" "$dump"
}
