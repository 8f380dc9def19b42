#!/usr/bin/env python3
"""Holds the workspace's declared `rust-version`.

Every crate the published packages (mcp-runtime, mcp-runtime-macros,
mcp-runtime-grammar) build with, for all features, as resolved in Cargo.lock
(normal and build dependencies; dev-dependencies are the workspace's own
affair), must declare a `rust-version` no newer than ours: otherwise a user on
our minimum toolchain could not build what we test. The use of standard
library items newer than the declared version is caught by clippy's
`incompatible_msrv` lint in CI; this machine has one toolchain, so the
language itself is not checked against an older compiler.

A crate that fails here is held back in Cargo.lock with
`cargo update -p NAME --precise VERSION` (an older release declaring an older
rust-version), or the declared version is raised in the workspace Cargo.toml.

usage: python3 scripts/msrv.py     (prints `msrv: ...`; exit 1 on a newer crate)
"""
import json
import subprocess
import sys

PUBLISHED = {"mcp-runtime", "mcp-runtime-macros", "mcp-runtime-grammar"}


def version(text):
    """`1.85` and `1.85.0` alike, as (1, 85, 0)."""
    parts = [int(part) for part in (text or "0").split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"],
        check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    roots = [i for i, p in packages.items() if p["name"] in PUBLISHED]
    # The oldest any published package declares holds for all of them.
    ours = min(version(packages[i].get("rust_version")) for i in roots)
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for dep in nodes[node]["deps"]:
            if any(kind["kind"] in (None, "build") for kind in dep["dep_kinds"]):
                stack.append(dep["pkg"])
    newer = sorted((packages[i]["name"], packages[i]["version"], packages[i]["rust_version"])
                   for i in seen if version(packages[i].get("rust_version")) > ours)
    declared = ".".join(map(str, ours[:2] if ours[2] == 0 else ours))
    for name, ver, rv in newer:
        print(f"msrv: {name} {ver} declares rust-version {rv}, newer than ours ({declared})")
    print(f"msrv: {len(seen)} crates checked against rust-version {declared}, {len(newer)} newer")
    return 1 if newer else 0


if __name__ == "__main__":
    sys.exit(main())
