#!/usr/bin/env bash
# Coverage-guided fuzzing of mcp-runtime with cargo-fuzz / libFuzzer.
#
# usage: bash fuzz/run.sh SECONDS [TARGET...]
#        bash fuzz/run.sh --bin-dir   (prints where the built targets are, and stops)
#
# Installs cargo-fuzz when missing, builds every target once (release with
# debug assertions, address sanitizer: cargo-fuzz's defaults; stable rustc
# takes the nightly flags with RUSTC_BOOTSTRAP=1), then runs each target (all
# of them, or those named) for SECONDS on a scratch corpus that starts as a
# copy of the committed seeds (fuzz/corpus/TARGET -> fuzz/runs/TARGET, so a
# run never adds to the seeds). Prints a line per target and one summary
# line, and exits non-zero if any target crashed, timed out or ran out of
# memory, naming the input that did it and how to reproduce it. The binaries
# are wherever cargo puts the fuzz workspace's builds (`cargo metadata`'s
# target_directory: fuzz/target, or CARGO_TARGET_DIR, or build.target-dir);
# a target with no binary there is an error that says so, not a crash.
#
# Environment: FUZZ_SANITIZER (default address; `none` to skip ASan),
# FUZZ_ARGS (more libFuzzer flags, e.g. "-max_len=8192"), CARGO_TARGET_DIR.
set -uo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$FUZZ_DIR")"
ALL_TARGETS=(jsonrpc dispatch headers uri_template request_state elicitation)

usage() {
    echo "usage: bash fuzz/run.sh SECONDS [TARGET...]   (targets: ${ALL_TARGETS[*]})" >&2
    echo "       bash fuzz/run.sh --bin-dir" >&2
    exit 2
}

# Where `cargo fuzz build --target TRIPLE` puts the binaries: the release
# directory of that triple in the fuzz workspace's target directory, as cargo
# itself resolves it.
bin_dir() {
    local metadata target_dir
    metadata="$(cargo metadata --format-version 1 --no-deps --manifest-path "$FUZZ_DIR/Cargo.toml")" || {
        echo "fuzz: cargo metadata failed for $FUZZ_DIR/Cargo.toml" >&2
        return 1
    }
    target_dir="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")" \
        && [[ -n "$target_dir" ]] || {
        echo "fuzz: cargo metadata names no target_directory" >&2
        return 1
    }
    echo "$target_dir/$(rustc -vV | sed -n 's/^host: //p')/release"
}

cd "$ROOT" || exit 1
if [[ "${1:-}" == --bin-dir ]]; then
    bin_dir
    exit
fi

[[ $# -ge 1 && "$1" =~ ^[0-9]+$ && "$1" -gt 0 ]] || usage
SECS="$1"
shift
TARGETS=("$@")
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=("${ALL_TARGETS[@]}")
for t in "${TARGETS[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t'" >&2; usage; }
done

export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    nice -n 10 cargo install cargo-fuzz --locked || { echo "fuzz: cannot install cargo-fuzz" >&2; exit 1; }
fi

TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
SANITIZER="${FUZZ_SANITIZER:-address}"
BUILD_LOG="$FUZZ_DIR/runs/build.log"
mkdir -p "$FUZZ_DIR/runs"

echo "fuzz: building all targets (sanitizer: $SANITIZER)"
if ! nice -n 10 cargo fuzz build -s "$SANITIZER" --target "$TRIPLE" >"$BUILD_LOG" 2>&1; then
    if [[ "$SANITIZER" != none ]]; then
        tail -n 20 "$BUILD_LOG" >&2
        echo "fuzz: the $SANITIZER-sanitizer build failed; falling back to -s none (no ASan)" >&2
        SANITIZER=none
        nice -n 10 cargo fuzz build -s none --target "$TRIPLE" >"$BUILD_LOG" 2>&1 || {
            tail -n 40 "$BUILD_LOG" >&2
            echo "fuzz: build failed (log: $BUILD_LOG)" >&2
            exit 1
        }
    else
        tail -n 40 "$BUILD_LOG" >&2
        echo "fuzz: build failed (log: $BUILD_LOG)" >&2
        exit 1
    fi
fi
BIN_DIR="$(bin_dir)" || exit 1
# A missing binary is a build that went elsewhere, not a crash: say so, run nothing.
missing=()
for t in "${TARGETS[@]}"; do
    [[ -x "$BIN_DIR/$t" ]] || missing+=("$t")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "fuzz: error: no binary for ${missing[*]} in $BIN_DIR after the build (log: $BUILD_LOG)" >&2
    exit 1
fi

total_execs=0
total_crashes=0
failures=()
for t in "${TARGETS[@]}"; do
    work="$FUZZ_DIR/runs/$t"
    artifacts="$FUZZ_DIR/artifacts/$t"
    log="$FUZZ_DIR/runs/$t.log"
    rm -rf "$work"
    mkdir -p "$work" "$artifacts"
    if compgen -G "$FUZZ_DIR/corpus/$t/*" >/dev/null; then
        cp "$FUZZ_DIR/corpus/$t"/* "$work"/
    fi
    marker="$FUZZ_DIR/runs/.$t.start"
    touch "$marker"
    # shellcheck disable=SC2086  # FUZZ_ARGS is split on purpose
    nice -n 10 "$BIN_DIR/$t" "$work" \
        -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} >"$log" 2>&1
    rc=$?
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    new_units="$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)"
    rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)"
    # Fork mode (-fork=N in FUZZ_ARGS) prints no final stats: take its last
    # progress line, `#E: cov: ... exec/s: R oom/timeout/crash: O/T/C ...`.
    fork_line="$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1)"
    if [[ -z "$execs" && -n "$fork_line" ]]; then
        execs="$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$fork_line")"
        rate="$(sed -nE 's/.* exec\/s: ([0-9]+).*/\1/p' <<<"$fork_line")"
    fi
    execs="${execs:-0}"
    # What this run left: crash-*, timeout-*, oom-*, leak-* (not slow-unit-*).
    found=()
    while IFS= read -r f; do
        found+=("$f")
    done < <(find "$artifacts" -maxdepth 1 -type f -newer "$marker" \
        \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
    crashes=${#found[@]}
    if [[ -n "$fork_line" ]]; then
        fork_failures="$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\1 + \2 + \3/p' <<<"$fork_line")"
        fork_failures=$((${fork_failures:-0}))
        [[ $fork_failures -le $crashes ]] || crashes=$fork_failures
    fi
    if [[ $rc -ne 0 && $crashes -eq 0 ]]; then
        crashes=1 # failed without an artifact (e.g. a crash in start-up)
    fi
    rm -f "$marker"
    echo "  $t: ${rate:-?} exec/s, ${new_units:-?} new units, corpus $(find "$work" -type f | wc -l) files, peak RSS ${rss:-?} MB (log: ${log#"$ROOT"/})"
    echo "fuzz $t: $execs executions, $crashes crashes"
    if [[ $crashes -gt 0 ]]; then
        { grep -m 1 -A 1 'panicked at' "$log"; grep -m 2 -E '^==[0-9]+== ?ERROR|ERROR: libFuzzer' "$log"; } | sed 's/^/    /'
        for f in "${found[@]}"; do
            rel="${f#"$ROOT"/}"
            echo "    input: $rel"
            echo "    reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run $t $rel"
            echo "           or: $BIN_DIR/$t $rel   (RUST_BACKTRACE=1 for the stack; MCP_FUZZ_DEBUG=1 shows dispatch's lines)"
        done
        [[ ${#found[@]} -gt 0 ]] || echo "    exit code $rc without an artifact: see $log"
        failures+=("$t")
    fi
    total_execs=$((total_execs + execs))
    total_crashes=$((total_crashes + crashes))
done

[[ "$SANITIZER" == address ]] || echo "fuzz: note: built with -s $SANITIZER (no AddressSanitizer)"
echo "fuzz: ${#TARGETS[@]} targets, $total_execs executions, $total_crashes crashes"
[[ $total_crashes -eq 0 ]] || exit 1
