#!/usr/bin/env python3
"""Writes the committed seed corpora, fuzz/corpus/<target>/<name>.

Seeds are real MCP 2026-07-28 (and 2025-11-25 legacy) messages like the
ones in tests/ and examples/, the spec's example messages from
tests/spec/2026-07-28/examples, and near misses the parser must reject.

The dispatch target's second-round seeds need a genuine `requestState`:
when the dispatch fuzz binary is built (fuzz/target/<triple>/release/dispatch),
this script runs it on the first-round seeds with MCP_FUZZ_DEBUG=1 and reads
the state from the response (sealed with the fixed key and the 100-year
lifetime the target's server uses, so those seeds keep opening).

usage: python3 fuzz/gen_seeds.py   (from anywhere; rewrites the seed folders)
"""
import glob
import json
import os
import pathlib
import shutil
import subprocess

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
CORPUS = FUZZ / "corpus"
SPEC = ROOT / "tests" / "spec" / "2026-07-28" / "examples"
V = "2026-07-28"


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def meta(caps=None, **extra):
    m = {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz-seed", "version": "1.0.0"},
    }
    m.update(extra)
    return m


def req(id, method, params=None, caps=None, **meta_extra):
    p = dict(params or {})
    if "_meta" not in p:
        p["_meta"] = meta(caps, **meta_extra)
    return compact({"jsonrpc": "2.0", "id": id, "method": method, "params": p})


def write(target, seeds):
    folder = CORPUS / target
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in seeds.items():
        if isinstance(data, str):
            data = data.encode()
        (folder / name).write_bytes(data)
    print(f"{target}: {len(seeds)} seeds")


def spec_messages():
    """The spec's example JSON-RPC messages, compacted, by file stem."""
    out = {}
    for path in sorted(glob.glob(str(SPEC / "*" / "*.json"))):
        with open(path) as f:
            v = json.load(f)
        if isinstance(v, dict) and v.get("jsonrpc") == "2.0":
            out[f"spec-{pathlib.Path(path).stem}"] = compact(v)
    return out


ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
PREFS = {"name": "Ada", "age": 36, "newsletter": True, "colour": "green", "extras": ["red", "blue"]}


def dispatch_round1():
    return {
        "discover": req(1, "server/discover"),
        "tools-list": req(2, "tools/list"),
        "tools-list-cursor": req(3, "tools/list", {"cursor": "Mg"}),
        "call-echo": req(4, "tools/call", {"name": "echo", "arguments": {"text": "hi\nthere \u00e9"}}),
        "call-echo-bad-args": req(5, "tools/call", {"name": "echo", "arguments": {"text": 5}}),
        "call-describe": req(
            6,
            "tools/call",
            {"name": "describe", "arguments": {"item": {"name": "box", "count": 3, "shape": "square", "tags": ["a"], "weight": 1.5}, "note": "n"}},
        ),
        "call-describe-bad-enum": req(7, "tools/call", {"name": "describe", "arguments": {"item": {"name": "b", "count": -1, "shape": "hexagon"}}}),
        "call-region": req(8, "tools/call", {"name": "region_echo", "arguments": {"region": "eu-west"}}),
        "call-refuse": req(9, "tools/call", {"name": "refuse", "arguments": {"reason": "no"}}),
        "call-work-progress": req(
            10, "tools/call", {"name": "work", "arguments": {"steps": 3}}, progressToken="p1",
            **{"io.modelcontextprotocol/logLevel": "debug"},
        ),
        "call-unknown-tool": req(11, "tools/call", {"name": "nope", "arguments": {}}),
        "call-sign-up-no-caps": req(12, "tools/call", {"name": "sign_up", "arguments": {"plan": "pro"}}),
        "call-sign-up-round1": req(13, "tools/call", {"name": "sign_up", "arguments": {"plan": "pro"}}, caps={"elicitation": {"form": {}}}),
        "call-sign-up-all-answers": req(
            14,
            "tools/call",
            {
                "name": "sign_up",
                "arguments": {"plan": "pro"},
                "inputResponses": {
                    "prefs": {"action": "accept", "content": PREFS},
                    "confirm": {"action": "accept", "content": {"ok": True}},
                },
            },
            caps={"elicitation": {}},
        ),
        "call-sign-up-declined": req(
            15, "tools/call",
            {"name": "sign_up", "arguments": {"plan": "free"}, "inputResponses": {"prefs": {"action": "decline"}}},
            caps={"elicitation": {}},
        ),
        "call-sign-up-forged-state": req(
            16, "tools/call",
            {"name": "sign_up", "arguments": {"plan": "pro"}, "requestState": "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "inputResponses": {}},
            caps={"elicitation": {}},
        ),
        "call-gather": req(17, "tools/call", {"name": "gather", "arguments": {}}, caps=ALL_CAPS),
        "call-gather-answers": req(
            18, "tools/call",
            {
                "name": "gather",
                "arguments": {},
                "inputResponses": {
                    "roots": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]},
                    "sample": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
                    "visit": {"action": "accept"},
                },
            },
            caps=ALL_CAPS,
        ),
        "resources-list": req(19, "resources/list"),
        "templates-list": req(20, "resources/templates/list"),
        "read-note": req(21, "resources/read", {"uri": "fuzz://note"}),
        "read-item": req(22, "resources/read", {"uri": "fuzz://items/3"}),
        "read-item-missing": req(23, "resources/read", {"uri": "fuzz://items/42"}),
        "read-file-traversal": req(24, "resources/read", {"uri": "fuzz://files/a/%2e%2e/etc"}),
        "read-file": req(25, "resources/read", {"uri": "fuzz://files/docs/a%20b.txt"}),
        "prompts-list": req(26, "prompts/list"),
        "prompt-get": req(27, "prompts/get", {"name": "review", "arguments": {"code": "fn main(){}", "language": "rust"}}),
        "prompt-get-missing-arg": req(28, "prompts/get", {"name": "review", "arguments": {}}),
        "complete-prompt": req(29, "completion/complete", {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "ru"}}),
        "complete-resource": req(
            30, "completion/complete", {"ref": {"type": "ref/resource", "uri": "fuzz://items/{id}"}, "argument": {"name": "id", "value": "1"}}
        ),
        "listen": req(31, "subscriptions/listen", {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["fuzz://note"]}}),
        "no-meta": compact({"jsonrpc": "2.0", "id": 32, "method": "tools/list", "params": {}}),
        "old-version": req(33, "tools/list", {"_meta": meta() | {"io.modelcontextprotocol/protocolVersion": "2024-01-01"}}),
        "meta-not-object": req(34, "tools/list", {"_meta": [1]}),
        "caps-malformed": req(35, "tools/list", {"_meta": meta(caps={"elicitation": 5})}),
        "unknown-method": req("s-36", "resources/subscribe", {"uri": "fuzz://note"}),
        "string-id-escaped-method": '{"jsonrpc":"2.0","id":"a\\"b","method":"tools\\/list","params":{"_meta":' + compact(meta()) + "}}",
        "parse-error": "{not json",
        "array": "[1,2]",
        "notification-cancelled": compact({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        "response-stray": compact({"jsonrpc": "2.0", "id": "s-1", "result": {}}),
        # Several lines: legacy sessions and cancellation.
        "legacy-session": "\n".join(
            [
                compact({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "old", "version": "1"}}}),
                compact({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                compact({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                compact({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "old"}}}),
                compact({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
                compact({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "info"}}),
            ]
        ),
        "legacy-elicitation": "\n".join(
            [
                compact({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "old", "version": "1"}}}),
                compact({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sign_up", "arguments": {"plan": "pro"}}}),
                compact({"jsonrpc": "2.0", "id": "s-1", "result": {"action": "accept", "content": PREFS}}),
                compact({"jsonrpc": "2.0", "id": "s-2", "result": {"action": "accept", "content": {"ok": False}}}),
            ]
        ),
        "legacy-elicitation-unanswered": "\n".join(
            [
                compact({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}}}),
                compact({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sign_up", "arguments": {"plan": "pro"}}}),
                compact({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
            ]
        ),
        "legacy-then-modern": "\n".join(
            [
                compact({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
                req(1, "tools/call", {"name": "echo", "arguments": {"text": "modern in a session"}}),
            ]
        ),
        "listen-then-call": "\n".join([req(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}), req(2, "tools/list")]),
    }


def dispatch_round2(round1):
    """Second-round seeds, with the genuine requestState of a first round."""
    binary = FUZZ / "target" / "x86_64-unknown-linux-gnu" / "release" / "dispatch"
    if not binary.exists():
        print("dispatch not built: no second-round seeds (build with run.sh, then run this again)")
        return {}
    seed = FUZZ / "target" / "round1.seed"
    seed.write_text(round1)
    env = dict(os.environ, MCP_FUZZ_DEBUG="1", ASAN_OPTIONS="detect_leaks=0")
    run = subprocess.run([str(binary), str(seed)], capture_output=True, text=True, env=env)
    state = None
    for line in run.stderr.splitlines():
        if line.startswith("< "):
            state = json.loads(line[2:]).get("result", {}).get("requestState") or state
    if not state:
        raise SystemExit(f"no requestState from the first round:\n{run.stderr[-3000:]}")
    caps = {"elicitation": {"form": {}}}
    args = {"plan": "pro"}
    return {
        "call-sign-up-round2": req(
            13, "tools/call",
            {"name": "sign_up", "arguments": args, "requestState": state, "inputResponses": {"prefs": {"action": "accept", "content": PREFS}}},
            caps=caps,
        ),
        "call-sign-up-round2-bad-answer": req(
            13, "tools/call",
            {"name": "sign_up", "arguments": args, "requestState": state, "inputResponses": {"prefs": {"action": "accept", "content": {"name": 1}}}},
            caps=caps,
        ),
        "call-sign-up-round2-other-args": req(
            13, "tools/call",
            {"name": "sign_up", "arguments": {"plan": "free"}, "requestState": state, "inputResponses": {"prefs": {"action": "cancel"}}},
            caps=caps,
        ),
        "call-sign-up-round2-no-answers": req(13, "tools/call", {"name": "sign_up", "arguments": args, "requestState": state}, caps=caps),
    }


def jsonrpc_seeds():
    m = compact(meta())
    seeds = {
        "request": req(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        "request-string-id": req("abc", "resources/read", {"uri": "fuzz://items/1"}),
        "request-prompt": req(-5, "prompts/get", {"name": "review", "arguments": {}}),
        "request-meta-full": req(
            2, "tools/list", caps={"sampling": {}, "roots": {"listChanged": True}},
            progressToken=7, **{"io.modelcontextprotocol/logLevel": "warning"},
        ),
        "request-no-params": '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        "notification": '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc"}}',
        "response-result": '{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept"}}',
        "response-error": '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}',
        "not-json": "{not json",
        "empty": "",
        "array": "[1,2]",
        "string": '"hello"',
        "jsonrpc-1": '{"jsonrpc":"1.0","id":7,"method":"server/discover"}',
        "method-number": '{"jsonrpc":"2.0","id":8,"method":42}',
        "params-array": '{"jsonrpc":"2.0","id":"s","method":"tools/list","params":[1]}',
        "id-null": '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        "id-float": '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        "id-huge": '{"jsonrpc":"2.0","id":18446744073709551615,"method":"tools/list"}',
        "missing-method": '{"jsonrpc":"2.0","id":9}',
        "duplicate-id": '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
        "escaped-method": '{"jsonrpc":"2.0","id":"x","method":"tools\\/list","params":{"_meta":' + m + "}}",
        "escaped-id": '{"jsonrpc":"2.0","id":"a\\u0000\\n\\"b","method":"ping"}',
        "invalid-utf8": b'{"jsonrpc":"2.0","id":1,"method":"a\xff"}',
        "deep": '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":' + "[" * 70 + "1" + "]" * 70 + "}}",
        "trailing": '{"jsonrpc":"2.0","id":1,"method":"ping"} x',
        "meta-escaped-keys": '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e\\u0063ho","_meta":{"io.modelcontextprotocol\\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}',
        "meta-bad-version-type": req(1, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": 2026, "io.modelcontextprotocol/clientCapabilities": {}}}),
        "meta-missing-caps": req(1, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": V}}),
        "meta-null": req(1, "tools/list", {"_meta": None}),
        "name-not-string": req(1, "tools/call", {"name": ["echo"], "arguments": {}}),
        "duplicate-meta": '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{},"_meta":' + m + "}}",
        "mrtr": req(1, "tools/call", {"name": "sign_up", "arguments": {"plan": "x"}, "inputResponses": {"prefs": {"action": "decline"}}, "requestState": "AQ"}),
    }
    seeds.update(spec_messages())
    return seeds


def headers_seeds():
    mv = compact(meta())

    def case(method, name, args, meta_text, declared, headers):
        return "\n".join([method, name, args, meta_text, declared] + headers)

    return {
        "call-ok": case("tools/call", "region_echo", '{"region":"eu-west"}', mv, "region=Region",
                        ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: region_echo", "Mcp-Param-Region: eu-west", "Accept: application/json"]),
        "call-base64": case("tools/call", "caf\u00e9 \u2615", '{"q":"h\u00e9llo"}', mv, "q=Query",
                            ["mcp-protocol-version: 2026-07-28", "mcp-method: tools/call", "mcp-name: =?base64?Y2Fmw6kg4piV?=", "mcp-param-query: =?base64?aMOpbGxv?="]),
        "numbers": case("tools/call", "t", '{"n":42,"b":true,"f":1.5}', mv, "n=N,b=B,f=F",
                        ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: t", "Mcp-Param-N: 42.0", "Mcp-Param-B: true", "Mcp-Param-F: 1.5"]),
        "method-mismatch": case("tools/list", "", "", mv, "", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call"]),
        "name-mismatch": case("prompts/get", "review", "", mv, "", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: prompts/get", "Mcp-Name: other"]),
        "repeated": case("resources/read", "fuzz://note", "", mv, "",
                         ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: resources/read", "Mcp-Name: fuzz://note", "Mcp-Name:  fuzz://note ", "mcp-name: fuzz://other"]),
        "version-mismatch": case("tools/list", "", "", mv, "", ["MCP-Protocol-Version: 2025-11-25", "Mcp-Method: tools/list"]),
        "no-headers": case("tools/list", "", "", mv, "", []),
        "bad-base64": case("tools/call", "x", "{}", mv, "", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: =?base64?SGVs!!!bG8=?="]),
        "base64-not-utf8": case("tools/call", "x", "{}", mv, "", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: =?base64?/w==?="]),
        "param-missing": case("tools/call", "region_echo", '{"region":"eu"}', mv, "region=Region", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: region_echo"]),
        "param-extra": case("tools/call", "region_echo", "{}", mv, "region=Region",
                            ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: region_echo", "Mcp-Param-Region: eu"]),
        "meta-missing": case("tools/list", "", "", "{}", "", ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]),
        "obs-text": "tools/call\nx\n{}\n" + mv + "\n\n" + "Mcp-Method: tools/call\nMcp-Name: x\xe9\n",
        # A vertical tab around a value is whitespace the comparison trims, as any other.
        "vertical-tab": case("tools/list", "", "", mv, "", ["MCP-Protocol-Version: 2026-07-28\x0b", "Mcp-Method: \x0btools/list"]),
    }


def uri_template_seeds():
    return {
        "simple": "test://template/{id}/data\ntest://template/123/data\ntest://template/a%20b/data\ntest://template//data",
        "reserved": "files://{+path}\nfiles://a/b.txt\nfiles://a/../etc/passwd\nfiles://a/%2e%2e/etc\nfiles://a\\..\\b",
        "traversal": "files://{name}\nfiles://a/b\nfiles://a%2Fb\nfiles://..\nfiles://%2E%2E",
        "two-vars": "x://{a}-{b}.{c}\nx://1-2.3\nx://--.-\nx://a-b-c.d.e",
        "mixed": "db://{schema}/tables/{+rest}\ndb://public/tables/users/42\ndb://%E2%82%AC/tables/%ZZ",
        "query": "q://{id}\nq://a?b\nq://a#b\nq://a%3Fb",
        "unsupported": "x://{#a}\nx://{a,b}\nx://{a*}\nx://{?q}\nx://{a",
        "adjacent": "x://{a}{b}\nx://ab",
        "unopened": "x://a}b\nx://a}b",
        "utf8": "caf\u00e9://{n}\ncaf\u00e9://\u2615\ncaf\u00e9://%E2%98%95",
        "bad-escapes": "x://{v}\nx://%+F\nx://%-1\nx://%2\nx://%\nx://%G0\nx://%C3%28",
    }


def request_state_seeds():
    def changes(*records):
        out = b""
        for op, at, val in records:
            out += bytes([op]) + at.to_bytes(2, "big") + bytes([val])
        return out

    return {
        "text-empty": b"\x00",
        "text-short": b"\x00AQ",
        "text-version-only": b"\x00" + b"AQ" + b"A" * 60,
        "text-bad-version": b"\x00" + b"Ag" + b"A" * 60,
        "text-not-base64": b"\x00!!!!====",
        "text-padded": b"\x00AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
        "genuine": b"\x01\x00",
        "genuine-rotated-key": b"\x01\x03",
        "flip-version": b"\x01\x00" + changes((0, 0, 1)),
        "flip-nonce": b"\x01\x01" + changes((0, 5, 0x80)),
        "flip-tag": b"\x01\x02" + changes((0, 0xFFFF, 1)),
        "flip-twice-back": b"\x01\x00" + changes((0, 30, 4), (0, 30, 4)),
        "set-char": b"\x01\x00" + changes((1, 10, ord("A"))),
        "truncate": b"\x01\x00" + changes((2, 40, 0)),
        "truncate-one": b"\x01\x00" + changes((2, 0xFFFF, 0), (2, 200, 0)),
        "append": b"\x01\x00" + changes((3, 0, ord("A"))),
        "append-padding": b"\x01\x00" + changes((3, 0, ord("=")), (3, 0, ord("="))),
        "rebound-same": b"\x02\x00=\n=\n=\n=",
        "rebound-name": b"\x02\x00=\nsign_up2",
        "rebound-method": b"\x02\x00prompts/get",
        "rebound-args-reordered": b'\x02\x00=\n=\n{"a":"z","b":[1,{"x":1,"y":2}]}',
        "rebound-args-other": b'\x02\x00=\n=\n{"a":"z","b":[1,{"x":1,"y":3}]}',
        "rebound-principal": b"\x02\x01=\n=\n=\nbob",
        "rebound-no-principal": b"\x02\x01=\n=\n=\n-",
        "rebound-null-args": b"\x02\x02=\n=\nnull",
        "rebound-nul-name": b"\x02\x02=\nfuzz://items/1\x00",
    }


def elicitation_seeds():
    ticket = {"title": "Printer on fire", "urgent": True, "count": 2, "delta": -3, "ratio": 0.5, "level": "high", "labels": ["low", "high"], "note": None}
    return {
        "accept": compact({"action": "accept", "content": ticket}),
        "accept-minimal": compact({"action": "accept", "content": {"title": "t", "urgent": False, "count": 0, "level": "low", "labels": []}}),
        "accept-no-content": compact({"action": "accept"}),
        "accept-null-content": compact({"action": "accept", "content": None}),
        "accept-wrong-types": compact({"action": "accept", "content": {"title": 1, "urgent": "yes", "count": 300, "level": "mid", "labels": "low"}}),
        "accept-extra-field": compact({"action": "accept", "content": dict(ticket, extra=[1, 2])}),
        "accept-big-numbers": compact({"action": "accept", "content": dict(ticket, delta=9223372036854775808, ratio=1e308)}),
        "decline": compact({"action": "decline"}),
        "cancel": compact({"action": "cancel", "content": {"ignored": True}}),
        "unknown-action": compact({"action": "maybe"}),
        "action-not-string": compact({"action": 1}),
        "no-action": compact({"content": ticket}),
        "array-answer": compact(["accept", ticket]),
        "null-answer": "null",
        "string-answer": '"accept"',
        # Not JSON as a whole: the first byte picks the action (0: accept, 1: decline), the rest is the content.
        "content-only-accept": "\x00" + compact(ticket),
        "content-only-decline": "\x01" + compact(ticket),
        "content-only-array": "\x00[1,2,3]",
        "content-only-string": '\x00"text"',
    }


def main():
    write("jsonrpc", jsonrpc_seeds())
    round1 = dispatch_round1()
    seeds = dict(round1)
    seeds.update(dispatch_round2(round1["call-sign-up-round1"]))
    write("dispatch", seeds)
    write("headers", headers_seeds())
    write("uri_template", uri_template_seeds())
    write("request_state", request_state_seeds())
    write("elicitation", elicitation_seeds())


if __name__ == "__main__":
    main()
