#!/usr/bin/env python3
"""Regenerates the MCP Apps extension's schema fixture under tests/spec/ext-apps/.

    usage: python3 scripts/ext-apps-fixture.py [PACKAGE_TGZ]

Fetches the npm package @modelcontextprotocol/ext-apps at VERSION with
`npm pack` (the registry's own client; nothing is installed), or reads the
tarball PACKAGE_TGZ given instead, checks the SHA-256 of its JSON Schema
against SCHEMA_SHA256, and writes:

    tests/spec/ext-apps/schema.json   dist/src/generated/schema.json minus annotations
                                      (`description`, `$comment`), stripped exactly as
                                      scripts/spec-fixtures.py strips the core schemas
    tests/spec/ext-apps/LICENSE       the package's LICENSE, unchanged
    tests/spec/ext-apps/README.md     provenance, license, how to regenerate

Python 3 standard library, and npm on the PATH when no tarball is given.
"""

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = os.path.join(HERE, os.pardir, "tests", "spec", "ext-apps")
PACKAGE = "@modelcontextprotocol/ext-apps"
VERSION = "2.0.4"
SCHEMA = "package/dist/src/generated/schema.json"
LICENSE = "package/LICENSE"
SCHEMA_SHA256 = "3823abdec2ab00069420812520c20f561428e1bf328c8f61189094f5160e33d9"

README = """\
# The MCP Apps extension's schema (test fixture)

`schema.json` is `dist/src/generated/schema.json` of the npm package
[`{package}@{version}`](https://www.npmjs.com/package/{package}/v/{version}) (exported as
`{package}/schema.json`; generated from `src/spec.types.ts` of
[modelcontextprotocol/ext-apps](https://github.com/modelcontextprotocol/ext-apps)), whose SHA-256 as
published is `{sha256}`, with every `description` and `$comment` annotation removed (the structure
is what the tests validate against). The tests check every `_meta.ui` the server emits (tools:
`#/$defs/McpUiToolMeta`; resources: `#/$defs/McpUiResourceMeta`) against it.

## License

Not this repository's license: the package's `LICENSE`, copied unchanged beside this note. The
package's `package.json` says `MIT`; its `LICENSE` says the project is moving from the MIT License
to the Apache License 2.0 (new code and specification contributions Apache-2.0, contributions not
yet relicensed MIT, documentation CC-BY-4.0) and carries both texts. The schema is part of the
specification, so Apache-2.0, possibly with MIT-licensed portions.

## Regenerating

    python3 scripts/ext-apps-fixture.py

(`npm pack {package}@{version}`, the SHA-256 checked), or
`python3 scripts/ext-apps-fixture.py path/to/modelcontextprotocol-ext-apps-{version}.tgz`.
"""


def load_strip():
    spec = importlib.util.spec_from_file_location("spec_fixtures", os.path.join(HERE, "spec-fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.strip


def npm_pack(into):
    """The path of the package's tarball, fetched into `into` by `npm pack`."""
    out = subprocess.run(
        ["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", into, "--silent"],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()
    return os.path.join(into, out[-1])


def member(tar, name):
    found = tar.extractfile(name)
    if found is None:
        raise SystemExit(f"ext-apps: {name} is not a file in the package")
    return found.read()


def main(argv):
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        tgz = argv[1] if len(argv) == 2 else npm_pack(tmp)
        with tarfile.open(tgz, "r:gz") as tar:
            schema_bytes = member(tar, SCHEMA)
            license_bytes = member(tar, LICENSE)
    digest = hashlib.sha256(schema_bytes).hexdigest()
    if digest != SCHEMA_SHA256:
        print(f"ext-apps: {SCHEMA} has SHA-256 {digest}, expected {SCHEMA_SHA256}", file=sys.stderr)
        return 1
    schema = json.loads(schema_bytes.decode("utf-8"))
    os.makedirs(DEST, exist_ok=True)
    with open(os.path.join(DEST, "schema.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(load_strip()(schema), f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(DEST, "LICENSE"), "wb") as f:
        f.write(license_bytes)
    with open(os.path.join(DEST, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(README.format(package=PACKAGE, version=VERSION, sha256=SCHEMA_SHA256))
    print(f"ext-apps: wrote {os.path.normpath(DEST)} from {PACKAGE}@{VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
