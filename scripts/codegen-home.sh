#!/usr/bin/env bash
# Checks that a server binary does not compile the runtime's serving code
# itself.
#
# An `async fn` is compiled where its future is polled, and so is everything
# that future polls. The entry points a server binary calls (`main!`'s
# `cli::run`, the transports' `serve`, `HttpServer::serve_until`) therefore
# box their futures behind `dyn` inside mcp-runtime (`boxed::BoxFuture`): the
# transports, the dispatcher and every request's future are compiled there,
# once, and not again into each server binary on each build of it. Before,
# `examples/quickstart`'s own crate held 1.6 MB of machine code, most of it
# the runtime's, and a release build of it after an edit took 15 s instead of 2.
#
# This builds quickstart's crate to LLVM IR (debug profile, one codegen unit)
# and fails when it defines a function of mcp-runtime's `dispatch`,
# `transport`, `connection`, `legacy` or `cli` modules other than the two
# generic shims `cli::run` and `cli::run_with_args`, which are the user's to
# compile. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo rustc -q --example quickstart -- --emit=llvm-ir -C codegen-units=1 -o "$out/quickstart.ll" 2>/dev/null
ir=$(ls "$out"/quickstart*.ll)
# A name with `$` or `.` in it is quoted: @"_ZN...".
defined=$(grep '^define' "$ir" | grep -o '@"\?_ZN[^"( ]*' | tr -d '@"' || true)
if [ -z "$defined" ]; then
    echo "codegen-home: no function with a legacy-mangled name in $ir: cannot check" >&2
    exit 1
fi
echo "quickstart's crate defines $(wc -l <<<"$defined") functions"
serving=$(grep -E '^_ZN11mcp_runtime(8dispatch|9transport|10connection|6legacy|3cli)' <<<"$defined" |
    grep -vE '^_ZN11mcp_runtime3cli(3run|13run_with_args)17h[0-9a-f]{16}E$' || true)
if [ -n "$serving" ]; then
    echo "codegen-home: quickstart's own crate compiles $(wc -l <<<"$serving") function(s) of the runtime's serving code:" >&2
    head -20 <<<"$serving" | sed 's/^/  /' >&2
    echo "an entry point returns a future polled in the caller's crate; box it in mcp-runtime (boxed::BoxFuture)" >&2
    exit 1
fi
echo "codegen-home: ok (none of the runtime's dispatch, transport, connection, legacy or cli code)"
