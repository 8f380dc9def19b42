#!/usr/bin/env bash
# Checks that a server binary does not compile the runtime's serving code
# itself.
#
# An `async fn` is compiled where its future is polled, and so is everything
# that future polls. The entry points a server binary calls therefore hand
# their work to mcp-runtime: `main!`'s `cli::run` to a non-generic body, and
# the transports' `serve`, `HttpServer::bind`/`serve`/`serve_until` and
# `stop_signal_installed` box their futures behind `dyn` there
# (`boxed::BoxFuture`). The transports, the dispatcher and every request's
# future are compiled with mcp-runtime, once, and not again into each server
# binary on each build of it. Before, `examples/quickstart`'s own crate held
# 1.6 MB of machine code, most of it the runtime's, and a release build of it
# after an edit took 15 s instead of 2.
#
# This compiles two examples' own crates to LLVM IR, as rustc hands it to
# LLVM (before any inlining), at opt-level 2 (where, as in a release build,
# nothing already compiled upstream is reused), and fails when one defines an
# async body or closure of mcp-runtime's `dispatch`, `transport`,
# `connection`, `legacy` or `cli` modules, or a method of one of their types:
# the serving code. The entry points' own small bodies (`cli::run`,
# `HttpServer::serve_until`, an accessor rustc inlines across crates) are the
# caller's to compile. quickstart serves through `main!`; observed is an
# embedder's HTTP server (`HttpServer::bind`, `stop_signal_installed`,
# `serve_until`). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
modules='(8dispatch|9transport|10connection|6legacy|3cli)'
status=0
for example in quickstart observed; do
    if ! cargo rustc -q --example "$example" -- --emit=llvm-ir -C codegen-units=1 -C opt-level=2 \
        -C no-prepopulate-passes -o "$out/$example.ll" 2>"$out/$example.log"; then
        echo "codegen-home: cannot build $example:" >&2
        cat "$out/$example.log" >&2
        exit 1
    fi
    # A name with `$` or `.` in it is quoted: @"_ZN...".
    defined=$(grep '^define' "$out/$example"*.ll | grep -o '@"\?_ZN[^"( ]*' | tr -d '@"' || true)
    if [ -z "$defined" ]; then
        echo "codegen-home: no function with a legacy-mangled name in $example's IR: cannot check" >&2
        exit 1
    fi
    # Async bodies and closures of those modules
    # (`_ZN11mcp_runtime9transport...28_$u7b$$u7b$closure$u7d$$u7d$17h...E`),
    # and methods of their types (`_ZN<n>_$LT$mcp_runtime..transport..`).
    serving=$(grep -E "^_ZN11mcp_runtime$modules.*closure|^_ZN[0-9]+_\\\$LT\\\$(\\\$RF\\\$(mut\\\$u20\\\$)?)?mcp_runtime\\.\\.(dispatch|transport|connection|legacy|cli)\\.\\." <<<"$defined" || true)
    if [ -n "$serving" ]; then
        echo "codegen-home: $example's own crate compiles $(wc -l <<<"$serving") function(s) of the runtime's serving code:" >&2
        head -20 <<<"$serving" | sed 's/^/  /' >&2
        status=1
    else
        echo "codegen-home: $example: ok ($(wc -l <<<"$defined") functions defined, none of the runtime's serving code)"
    fi
done
if [ "$status" != 0 ]; then
    echo "an entry point returns a future polled in the caller's crate: box it in mcp-runtime (boxed::BoxFuture)" >&2
fi
exit "$status"
