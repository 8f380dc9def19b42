#!/usr/bin/env python3
"""Checks that every crate the runtime's code names outside platform-gated
modules is a dependency on Linux, macOS and Windows alike.

This machine cannot build for other targets (no other standard library can
be installed), so the check works from what cargo resolves: for each target
triple, `cargo tree --all-features --target T` lists mcp-runtime's direct
dependencies (optional ones too: a feature's crates must resolve everywhere), and
the source says which crates the code uses (`name::` paths). A file behind
`#[cfg(unix)] mod x;` (or `windows`, or `target_os = "linux"`, counted as Unix)
may use crates only that platform has.

usage: python3 scripts/portability.py
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "mcp-runtime" / "src"
TARGETS = {
    "x86_64-unknown-linux-gnu": "unix",
    "aarch64-apple-darwin": "unix",
    "x86_64-pc-windows-msvc": "windows",
}


def dependencies():
    """Dependency names of mcp-runtime, from `cargo metadata`, per kind."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    import json
    meta = json.loads(out)
    pkg = next(p for p in meta["packages"] if p["name"] == "mcp-runtime")
    return [d for d in pkg["dependencies"] if d["kind"] is None]


def gated_files():
    """Files of modules declared behind a platform cfg: path -> platform."""
    gated = {}
    decl = re.compile(r'#\[cfg\((unix|windows|target_os = "linux")\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;')
    for f in SRC.rglob("*.rs"):
        text = f.read_text()
        for platform, name in decl.findall(text):
            # Linux-only is counted among the Unix files: its crates must be there.
            platform = "unix" if platform.startswith("target_os") else platform
            base = f.parent if f.name in ("mod.rs", "lib.rs") else f.parent / f.stem
            for cand in (base / f"{name}.rs", base / name / "mod.rs"):
                if cand.exists():
                    gated[cand] = platform
                    if cand.name == "mod.rs":
                        for sub in cand.parent.rglob("*.rs"):
                            gated[sub] = platform
    return gated


def used_crates(names, gated, platform):
    """Crates named (`crate::` or `use crate`) in the files a platform compiles."""
    used = set()
    for f in SRC.rglob("*.rs"):
        if gated.get(f, platform) != platform:
            continue
        text = f.read_text()
        for n in names:
            ident = n.replace("-", "_")
            if re.search(rf"(?<![\w:]){ident}::", text):
                used.add(n)
    return used


def resolved(target):
    out = subprocess.run(
        ["cargo", "tree", "-p", "mcp-runtime", "--all-features", "--target", target, "-e", "normal",
         "--depth", "1", "--prefix", "none"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def main():
    deps = dependencies()
    # The name the code uses (a rename, if any) -> the package cargo tree lists.
    package_of = {(d.get("rename") or d["name"]): d["name"] for d in deps}
    names = list(package_of)
    gated = gated_files()
    failed = 0
    for target, platform in TARGETS.items():
        have = resolved(target)
        need = used_crates(names, gated, platform)
        missing = sorted(n for n in need if package_of[n] not in have)
        if missing:
            failed += 1
            print(f"portability {target}: MISSING {', '.join(missing)} (used by the code, not a dependency there)")
        else:
            print(f"portability {target}: ok ({len(need)} crates used, all resolved)")
    print(f"portability: {len(TARGETS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
