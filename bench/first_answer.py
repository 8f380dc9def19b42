#!/usr/bin/env python3
"""Spawn to first answer of stdio MCP servers, for a first `tools/call` and a first `tools/list`.

    python3 bench/first_answer.py [--runs N] [--tool NAME] BINARY...

Each run spawns BINARY, writes one request line, reads one answer line, and
closes stdin. The binaries and the two requests are interleaved run by run,
so that the host's drift reaches them alike. Prints the median and the middle
half of each set, in milliseconds. Pin it (`taskset -c 1`) to keep the
spawns on one core. The default tool is `test_simple_text`, one of
`examples/everything`'s.
"""

import argparse
import json
import os
import statistics
import subprocess
import time

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def first_answer(binary, line):
    start = time.perf_counter()
    child = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    child.stdin.write(line)
    child.stdin.flush()
    answer = child.stdout.readline()
    elapsed = time.perf_counter() - start
    child.stdin.close()
    child.wait()
    if b'"result"' not in answer:
        raise SystemExit(f"{binary}: not a result: {answer[:200]!r}")
    return elapsed * 1e3


def main():
    parser = argparse.ArgumentParser(description="spawn to first answer of stdio MCP servers")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--tool", default="test_simple_text")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    requests = {
        "tools/call": {"name": args.tool, "arguments": {}, "_meta": META},
        "tools/list": {"_meta": META},
    }
    lines = {
        method: (json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, separators=(",", ":")) + "\n").encode()
        for method, params in requests.items()
    }
    times = {(b, m): [] for b in args.binaries for m in lines}
    for _ in range(args.runs):
        for method, line in lines.items():
            for binary in args.binaries:
                times[(binary, method)].append(first_answer(binary, line))
                time.sleep(0.01)
    for (binary, method), runs in times.items():
        runs.sort()
        quarter = len(runs) // 4
        print(
            f"{os.path.basename(binary)}\t{method}\tmedian {statistics.median(runs):.3f} ms\t"
            f"middle half {runs[quarter]:.3f}-{runs[len(runs) - 1 - quarter]:.3f} ms\t({len(runs)} runs)"
        )


if __name__ == "__main__":
    main()
