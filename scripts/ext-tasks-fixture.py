#!/usr/bin/env python3
"""Regenerates the Tasks extension's schema fixture under tests/spec/ext-tasks/.

    usage: python3 scripts/ext-tasks-fixture.py EXT_TASKS_CHECKOUT

EXT_TASKS_CHECKOUT is a checkout of github.com/modelcontextprotocol/ext-tasks
(the extension `io.modelcontextprotocol/tasks`, SEP-2663). What it writes:

    tests/spec/ext-tasks/schema.json   schema/draft/schema.json minus annotations
                                       (`description`, `$comment`), stripped exactly
                                       as scripts/spec-fixtures.py strips the core schemas
    tests/spec/ext-tasks/LICENSE       the checkout's LICENSE (Apache-2.0), unchanged
    tests/spec/ext-tasks/README.md     provenance and how to regenerate

Python 3 standard library only.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = os.path.join(HERE, os.pardir, "tests", "spec", "ext-tasks")
REPO = "modelcontextprotocol/ext-tasks"
SOURCE = "schema/draft/schema.json"

README = """\
# The Tasks extension's schema (test fixture)

`schema.json` is `{source}` of [{repo}](https://github.com/{repo}) at commit
`{commit}`, with every `description` and `$comment` annotation removed (the structure is what the
tests validate against). The tests check every `CreateTaskResult`, `tasks/get`, `tasks/update` and
`tasks/cancel` result and `notifications/tasks` message the server emits against it.

License: Apache License 2.0, copied unchanged to `LICENSE` beside this note.

Regenerate with `python3 scripts/ext-tasks-fixture.py PATH_TO_EXT_TASKS_CHECKOUT`.
"""


def load_strip():
    spec = importlib.util.spec_from_file_location("spec_fixtures", os.path.join(HERE, "spec-fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.strip


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    checkout = argv[1]
    with open(os.path.join(checkout, SOURCE), encoding="utf-8") as f:
        schema = json.load(f)
    strip = load_strip()
    os.makedirs(DEST, exist_ok=True)
    with open(os.path.join(DEST, "schema.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(strip(schema), f, indent=2, ensure_ascii=False)
        f.write("\n")
    shutil.copyfile(os.path.join(checkout, "LICENSE"), os.path.join(DEST, "LICENSE"))
    try:
        commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "(unknown: not a git checkout)"
    with open(os.path.join(DEST, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(README.format(source=SOURCE, repo=REPO, commit=commit))
    print(f"ext-tasks: wrote {os.path.normpath(DEST)} from {REPO} at {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
