#!/usr/bin/env bash
# What packing start-up's code together does to a stdio server's memory:
#
#   bash bench/order.sh          builds the layouts below and measures them
#   bash bench/order.sh build    builds them only (`bash bench/run.sh` runs
#                                this for the worker-count sweep)
#
# Builds the echo server (`ours`, with the examples' features) into
# target/bench-order with a linker symbol ordering file, first empty; lists the
# functions of its own binary that run over pipes (start-up, three echo calls,
# exit) with `scripts/symbol-order.sh`, into the ordering file
# (target/bench-order/order.txt); and links again, so that they lie together
# at the start of `.text`. Each layout is also linked with packed relative
# relocations (`-z pack-relative-relocs`, DT_RELR), which shrink the table the
# dynamic loader reads at start-up from 24 bytes a relocation to about one
# bit. Then measures, with the raw stdio loop beside them: the default layout
# (the same build with the empty file), the same copied by `cp` (as an
# installed binary is), the default layout with packed relocations, the
# ordered one, and the ordered one with packed relocations. Then the same
# steps once more with glibc linked in (`-C target-feature=+crt-static`, a
# static-pie binary: no dynamic loader, no shared libc or libm mapped, and
# still loaded at a random address): the echo server traced, ordered and
# packed, as written and copied, and the raw stdio loop through the same
# recipe. And once more linked static at a fixed address (`-C
# relocation-model=static`: not a PIE, so nothing to relocate at start-up, and
# no address randomization of the binary), traced and ordered, beside the raw
# loop linked the same way.
# Peak RSS under `driver stdio-load` (20,000 calls, 64 in flight) and the
# median of 20 cold starts, three rounds each, interleaved.
#
# Why it matters: the kernel maps a binary's code 64 KiB around each fault, so
# a process's RSS counts every 64 KiB window its start-up touches, and the
# default layout spreads the few hundred functions a stdio server runs over
# most of the binary. The ordering is a setting of the binary's link, not of
# the framework: any binary can be traced and linked this way (rust-lld and
# GNU ld 2.43+ take `--symbol-ordering-file`; packed relocations need GNU ld
# 2.38+ or lld, and glibc 2.36+ where the binary runs).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-measure}
case $mode in
  measure | build) ;;
  *) echo "usage: bash bench/order.sh [build]" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || bash scripts/apt-install.sh "${0##*/}" valgrind || exit 1
dir=target/bench-order
mkdir -p "$dir"
order=$PWD/$dir/order.txt
: >"$order"
flags="-C link-arg=-Wl,--symbol-ordering-file=$order -C link-arg=-Wl,--no-warn-symbol-ordering"
# Cargo does not see the ordering file's contents, nor tell one link's flags
# from another's on a second run: touching the binary's source makes it link
# again every time.
build() {
  touch bench/src/bin/ours.rs
  CARGO_TARGET_DIR=$dir RUSTFLAGS="$flags" cargo build -q --release -p mcp-bench --features full --bin ours
}
# Each binary is kept as a hard link to what the linker wrote, never a copy:
# the kernel caches a file written by `cp` in large pieces (folios) and maps a
# whole one at a fault, and the same bytes then measure about 0.9 MiB more.
# The binary just built, linked again with packed relative relocations
# (`cargo rustc` passes the flag to the binary's own crate alone, so only it
# is rebuilt), saved as $dir/$1.
relr() {
  touch bench/src/bin/ours.rs
  CARGO_TARGET_DIR=$dir RUSTFLAGS="$flags" cargo rustc -q --release -p mcp-bench --features full --bin ours \
    -- -C link-arg=-Wl,-z,pack-relative-relocs
  ln -f "$dir/release/ours" "$dir/$1"
}
build
ln -f "$dir/release/ours" "$dir/ours-default"
relr ours-relr
cargo build -q --release -p mcp-bench --features full --bin ours --bin raw-stdio --bin driver
request='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
printf '%s\n' "$request" "$request" "$request" >"$dir/requests.jsonl"
bash scripts/symbol-order.sh -i "$dir/requests.jsonl" -o "$order" -- "$dir/release/ours"
build
ln -f "$dir/release/ours" "$dir/ours-ordered"
relr ours-ordered-relr
cp "$dir/ours-default" "$dir/ours-default-copied"
# Linked static: `--target` names the host's own triple, so that build
# scripts and proc-macros (which run in the compiler) are built without the
# flag; the binaries land in $dir/$triple/release.
triple=$(rustc -vV | awk '/^host:/ { print $2 }')
sorder=$PWD/$dir/order-static.txt
: >"$sorder"
sflags="-C target-feature=+crt-static -C link-arg=-Wl,--symbol-ordering-file=$sorder -C link-arg=-Wl,--no-warn-symbol-ordering"
# Ours and the raw loop linked static, into the target directory $1 with the
# flags $2 (both sources touched, so that both link again).
static_build() {
  touch bench/src/bin/ours.rs bench/src/bin/raw_stdio.rs
  CARGO_TARGET_DIR=$1 RUSTFLAGS="$2" cargo build -q --release --target "$triple" -p mcp-bench --features full \
    --bin ours --bin raw-stdio
}
# The raw loop goes through the same recipe as ours, so that the two compare
# linked the same way: both are traced into one ordering file (the linker
# skips the names a binary does not have).
trace_both() { # ORDER-FILE RELEASE-DIR
  bash scripts/symbol-order.sh -i "$dir/requests.jsonl" -o "$1.ours" -- "$2/ours"
  bash scripts/symbol-order.sh -i "$dir/requests.jsonl" -o "$1.raw" -- "$2/raw-stdio"
  awk '!seen[$0]++' "$1.ours" "$1.raw" >"$1"
}
static_build "$dir" "$sflags"
trace_both "$sorder" "$dir/$triple/release"
static_build "$dir" "$sflags"
for bin in ours raw-stdio; do
  touch "bench/src/bin/${bin//-/_}.rs"
  CARGO_TARGET_DIR=$dir RUSTFLAGS="$sflags" cargo rustc -q --release --target "$triple" -p mcp-bench --features full \
    --bin "$bin" -- -C link-arg=-Wl,-z,pack-relative-relocs
done
ln -f "$dir/$triple/release/ours" "$dir/ours-static-ordered-relr"
ln -f "$dir/$triple/release/raw-stdio" "$dir/raw-static"
cp "$dir/ours-static-ordered-relr" "$dir/ours-static-ordered-relr-copied"
# Linked static at a fixed address, in a target directory of its own (other
# flags would have every crate built again, each time the two alternate).
fdir=$PWD/target/bench-order-fixed
forder=$fdir/order.txt
mkdir -p "$fdir"
: >"$forder"
fflags="-C target-feature=+crt-static -C relocation-model=static -C link-arg=-Wl,--symbol-ordering-file=$forder -C link-arg=-Wl,--no-warn-symbol-ordering"
static_build "$fdir" "$fflags"
trace_both "$forder" "$fdir/$triple/release"
static_build "$fdir" "$fflags"
ln -f "$fdir/$triple/release/raw-stdio" "$dir/raw-fixed"
ln -f "$fdir/$triple/release/ours" "$dir/ours-fixed-ordered"
[[ $mode == build ]] && exit 0
bins=("$dir/ours-default" "$dir/ours-default-copied" "$dir/ours-relr" "$dir/ours-ordered" "$dir/ours-ordered-relr"
  "$dir/raw-static" "$dir/ours-static-ordered-relr" "$dir/ours-static-ordered-relr-copied"
  "$dir/raw-fixed" "$dir/ours-fixed-ordered")
echo "binary	bytes"
for bin in "${bins[@]}"; do echo "$bin	$(wc -c <"$bin")"; done
echo "round	binary	stdio peak RSS KiB	cold start ms (median of 20)"
for round in 1 2 3; do
  for bin in target/release/raw-stdio "${bins[@]}"; do
    rss=$(taskset -c 0 target/release/driver stdio-load x 20000 64 -- env TOKIO_WORKER_THREADS=2 taskset -c 1 "$bin" 2>/dev/null |
      awk -F'\t' '$1 == "stdio_peak_rss_kib" { print $4 }')
    cold=$(TOKIO_WORKER_THREADS=2 taskset -c 1 target/release/driver cold-start x 20 -- "$bin" 2>/dev/null |
      awk -F'\t' '$1 == "cold_start_ms" { print $4 }' | sort -n | awk '{ a[NR] = $1 } END { printf "%.3f", a[int(NR / 2) + 1] }')
    echo "$round	$bin	$rss	$cold"
  done
done
