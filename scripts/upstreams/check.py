#!/usr/bin/env python3
"""Checker for the upstream fixture surface (server.py / server.mjs), on the official MCP Python SDK
client (`mcp`, pinned in requirements.txt; MIT licensed). Point it at an upstream directly, or at
the gateway in front of one.

usage: check.py [--prefix P] [--mode legacy|auto|2026-07-28] [--timeout S] URL
       check.py [--prefix P] [--mode legacy|auto|2026-07-28] [--timeout S] -- COMMAND [ARGS...]

A URL (http:// or https://) is reached over Streamable HTTP; anything else after `--` is run as
a subprocess and spoken to over stdio (it inherits this environment; its stderr passes through).

--prefix P   tool and prompt names are expected as P + name (`--prefix py_` expects py_add,
             py_greet, ..., py_review); resource URIs are expected unchanged. Default: no prefix.
--mode M     how the SDK client negotiates: `legacy` (default; the 2025 `initialize` handshake,
             2025-11-25 offered), `auto` (probe `server/discover`, fall back to `initialize`),
             or `2026-07-28` (adopt that revision without a handshake).
--timeout S  seconds allowed for each request (default 30); the list_changed wait is 10 s.

Checks, in order (each is "ok" or "error"):
  connect         the handshake (or probe) completes
  tools_list      tools/list has add, greet, slow, grow, hop
  add             add {a: 2, b: 3} -> text "5"
  greet           greet, answering the elicitation with {name: "Ada"} -> "Hello, Ada!"; the
                  request must have reached the client (form mode, a string `name` property)
  slow            slow {seconds: 0.2} -> "slept"
  hop             hop -> "hopped" (on a 2025-era HTTP session the upstream closes the call's
                  response stream first, and the client resumes it with Last-Event-ID)
  resources_list  resources/list has fixture://readme
  readme          resources/read fixture://readme -> "the python upstream" or "the typescript upstream"
  templates_list  resources/templates/list has fixture://items/{id}
  template        resources/read fixture://items/7 -> "item 7"
  prompts_list    prompts/list has review
  prompt          prompts/get review {code: "x=1"} -> a message containing x=1
  list_changed    grow, then notifications/tools/list_changed arrives within 10 s (2025 era: an
                  unsolicited notification; 2026-07-28: on a subscriptions/listen stream opened first)
  extra           tools/list then has extra, and calling it -> "extra ran"

Prints one JSON line to stdout:
  {"ok": bool, "target": ..., "mode": ..., "protocol_version": ..., "server": {...} | null,
   "readme": text | null, "tools_list_changed_advertised": bool | null (null with a pinned --mode,
   which skips discovery), "checks": {"connect": "ok" | "error", ...}, "errors": {check: message, ...}}
and one `check.py: FAIL <check>: <message>` line on stderr per failed check. Exit status 0 when
every check passes, 1 when any fails, 2 on bad usage.

Environment (optional): MCP_UPSTREAMS_DEBUG=1 for SDK debug logging and tracebacks on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

DEBUG = os.environ.get("MCP_UPSTREAMS_DEBUG", "") not in ("", "0")
README_TEXTS = ("the python upstream", "the typescript upstream")
LIST_CHANGED_WAIT = 10.0
CHECKS = (
    "connect",
    "tools_list",
    "add",
    "greet",
    "slow",
    "hop",
    "resources_list",
    "readme",
    "templates_list",
    "template",
    "prompts_list",
    "prompt",
    "list_changed",
    "extra",
)


class CheckFailed(Exception):
    """A check's expectation was not met."""


def describe(exc: BaseException) -> str:
    """One readable line per leaf error; task groups wrap failures in (nested) exception groups."""
    group = getattr(exc, "exceptions", None)
    if isinstance(group, tuple) and group:  # BaseExceptionGroup (or its backport on Python 3.10)
        return "; ".join(describe(e) for e in group)
    if isinstance(exc, CheckFailed):
        return str(exc)
    if isinstance(exc, TimeoutError) and not str(exc):
        return "timed out"
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" (caused by {type(cause).__name__}: {cause})"
    return text


def texts(content: list[Any]) -> list[str]:
    return [block.text for block in content if isinstance(block, types.TextContent)]


def tool_text(result: types.CallToolResult, what: str) -> str:
    got = texts(result.content)
    if result.is_error:
        raise CheckFailed(f"{what} returned an error result: {' | '.join(got) or result.content!r}")
    if len(got) != 1:
        raise CheckFailed(f"{what} returned {len(got)} text blocks, expected 1: {result.content!r}")
    return got[0]


async def all_pages(list_page, method: str, names_of) -> list[str]:
    """What every page of a list names: `list_page(cursor=...)` page by page, `names_of(page)` of
    each; a list that still has a next cursor after 100 pages fails the check."""
    names: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        page = await list_page(cursor=cursor)
        names.extend(names_of(page))
        cursor = page.next_cursor
        if not cursor:
            return names
    raise CheckFailed(f"{method} kept returning a next cursor after 100 pages")


class Checker:
    def __init__(self, target: str | StdioServerParameters, prefix: str, mode: str, timeout: float) -> None:
        self.target = target
        self.prefix = prefix
        self.mode = mode
        self.timeout = timeout
        self.checks: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.summary: dict[str, Any] = {
            "protocol_version": None,
            "server": None,
            "readme": None,
            "tools_list_changed_advertised": None,
        }
        self.elicitations: list[types.ElicitRequestParams] = []
        self.tools_changed = anyio.Event()
        self.notifications: list[str] = []

    def name(self, bare: str) -> str:
        return self.prefix + bare

    # --- client callbacks ------------------------------------------------------------------
    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            print(f"check.py: transport error: {describe(message)}", file=sys.stderr)
            return
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.notifications.append(method)
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()

    # --- running ---------------------------------------------------------------------------
    async def step(self, check: str, fn: Callable[[], Awaitable[None]]) -> bool:
        try:
            with anyio.fail_after(self.timeout):
                await fn()
        except Exception as e:  # noqa: BLE001 - every failure becomes that check's error
            if DEBUG:
                traceback.print_exception(e)
            self.fail(check, describe(e))
            return False
        self.checks[check] = "ok"
        return True

    def fail(self, check: str, message: str) -> None:
        self.checks[check] = "error"
        self.errors[check] = message

    async def run(self) -> None:
        client = Client(
            self.target,
            mode=self.mode,
            read_timeout_seconds=self.timeout,
            elicitation_callback=self.on_elicit,
            message_handler=self.on_message,
            client_info=types.Implementation(name="mcp-upstreams-check", version="1.0.0"),
            cache=None,  # every list and read must reach the server
        )
        connected = False
        try:
            async with client:
                connected = True
                self.checks["connect"] = "ok"
                self.summary["protocol_version"] = client.protocol_version
                info = client.server_info
                self.summary["server"] = info.model_dump(mode="json", exclude_none=True) if info else None
                if self.mode not in MODERN_PROTOCOL_VERSIONS:  # a pinned mode adopts without asking the server
                    tools_cap = client.server_capabilities.tools
                    self.summary["tools_list_changed_advertised"] = bool(tools_cap and tools_cap.list_changed)
                await self.run_checks(client)
        except Exception as e:  # noqa: BLE001
            if DEBUG:
                traceback.print_exception(e)
            if not connected:
                self.fail("connect", describe(e))
                for check in CHECKS[1:]:
                    self.fail(check, "not run: connect failed")
            elif all(check in self.checks for check in CHECKS):
                # Every check has its verdict; a failure while closing does not change them.
                self.summary["close_error"] = describe(e)
            else:
                raise

    async def list_tool_names(self, client: Client) -> list[str]:
        return await all_pages(client.list_tools, "tools/list", lambda page: (t.name for t in page.tools))

    async def run_checks(self, client: Client) -> None:
        async def tools_list() -> None:
            names = await self.list_tool_names(client)
            missing = [self.name(n) for n in ("add", "greet", "slow", "grow", "hop") if self.name(n) not in names]
            if missing:
                raise CheckFailed(f"tools/list lacks {missing}; it has {names}")

        async def add() -> None:
            result = await client.call_tool(self.name("add"), {"a": 2, "b": 3})
            text = tool_text(result, self.name("add"))
            if text.strip() != "5":
                raise CheckFailed(f"add {{a: 2, b: 3}} returned {text!r}, expected '5'")

        async def greet() -> None:
            self.elicitations.clear()
            result = await client.call_tool(self.name("greet"), {})
            text = tool_text(result, self.name("greet"))
            if not self.elicitations:
                raise CheckFailed(f"greet returned {text!r} without eliciting anything from the client")
            asked = self.elicitations[0]
            schema = asked.requested_schema if isinstance(asked, types.ElicitRequestFormParams) else None
            name_prop = (schema or {}).get("properties", {}).get("name")
            if not isinstance(name_prop, dict) or name_prop.get("type") != "string":
                raise CheckFailed(f"greet's elicitation is not a form with a string `name`: {asked!r}")
            if text != "Hello, Ada!":
                raise CheckFailed(f"greet returned {text!r}, expected 'Hello, Ada!'")

        async def slow() -> None:
            result = await client.call_tool(self.name("slow"), {"seconds": 0.2})
            text = tool_text(result, self.name("slow"))
            if text != "slept":
                raise CheckFailed(f"slow returned {text!r}, expected 'slept'")

        async def hop() -> None:
            result = await client.call_tool(self.name("hop"), {})
            text = tool_text(result, self.name("hop"))
            if text != "hopped":
                raise CheckFailed(f"hop returned {text!r}, expected 'hopped'")

        async def resources_list() -> None:
            uris = await all_pages(
                client.list_resources, "resources/list", lambda page: (str(r.uri) for r in page.resources)
            )
            if "fixture://readme" not in uris:
                raise CheckFailed(f"resources/list lacks fixture://readme; it has {uris}")

        async def readme() -> None:
            result = await client.read_resource("fixture://readme")
            got = [c.text for c in result.contents if isinstance(c, types.TextResourceContents)]
            if len(got) != 1:
                raise CheckFailed(f"fixture://readme has {len(got)} text contents, expected 1: {result.contents!r}")
            self.summary["readme"] = got[0]
            if got[0] not in README_TEXTS:
                raise CheckFailed(f"fixture://readme reads {got[0]!r}, expected one of {list(README_TEXTS)}")

        async def templates_list() -> None:
            templates = await all_pages(
                client.list_resource_templates,
                "resources/templates/list",
                lambda page: (t.uri_template for t in page.resource_templates),
            )
            if "fixture://items/{id}" not in templates:
                raise CheckFailed(f"resources/templates/list lacks fixture://items/{{id}}; it has {templates}")

        async def template() -> None:
            result = await client.read_resource("fixture://items/7")
            got = [c.text for c in result.contents if isinstance(c, types.TextResourceContents)]
            if got != ["item 7"]:
                raise CheckFailed(f"fixture://items/7 reads {got!r}, expected ['item 7']")

        async def prompts_list() -> None:
            names = await all_pages(client.list_prompts, "prompts/list", lambda page: (p.name for p in page.prompts))
            if self.name("review") not in names:
                raise CheckFailed(f"prompts/list lacks {self.name('review')}; it has {names}")

        async def prompt() -> None:
            result = await client.get_prompt(self.name("review"), {"code": "x=1"})
            got = [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
            if not any("x=1" in t for t in got):
                raise CheckFailed(f"prompt review has no message containing 'x=1': {result.messages!r}")

        async def list_changed() -> None:
            self.tools_changed = anyio.Event()
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await self.grow_listening(client)
            else:
                await self.grow_and_wait(client)

        async def extra() -> None:
            names = await self.list_tool_names(client)
            if self.name("extra") not in names:
                raise CheckFailed(f"after grow, tools/list lacks {self.name('extra')}; it has {names}")
            result = await client.call_tool(self.name("extra"), {})
            text = tool_text(result, self.name("extra"))
            if text != "extra ran":
                raise CheckFailed(f"extra returned {text!r}, expected 'extra ran'")

        for check, fn in (
            ("tools_list", tools_list),
            ("add", add),
            ("greet", greet),
            ("slow", slow),
            ("hop", hop),
            ("resources_list", resources_list),
            ("readme", readme),
            ("templates_list", templates_list),
            ("template", template),
            ("prompts_list", prompts_list),
            ("prompt", prompt),
            ("list_changed", list_changed),
            ("extra", extra),
        ):
            await self.step(check, fn)

    async def call_grow(self, client: Client) -> None:
        result = await client.call_tool(self.name("grow"), {})
        tool_text(result, self.name("grow"))

    async def wait_changed(self, how: str) -> None:
        with anyio.move_on_after(LIST_CHANGED_WAIT):
            await self.tools_changed.wait()
            return
        seen = ", ".join(self.notifications) or "none"
        raise CheckFailed(f"no notifications/tools/list_changed {how} within {LIST_CHANGED_WAIT:g}s of grow (notifications seen: {seen})")

    async def grow_and_wait(self, client: Client) -> None:
        """2025 era: the server sends the notification unsolicited; the message handler sees it."""
        await self.call_grow(client)
        await self.wait_changed("arrived")

    async def grow_listening(self, client: Client) -> None:
        """2026-07-28: change notifications ride a subscriptions/listen stream the client opens."""
        async with client.listen(tools_list_changed=True) as sub:

            async def pump() -> None:
                async for event in sub:
                    if isinstance(event, ToolsListChanged):
                        self.tools_changed.set()
                        return

            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                await self.call_grow(client)
                await self.wait_changed("arrived on the subscriptions/listen stream")
                tg.cancel_scope.cancel()


def parse(argv: list[str]) -> tuple[argparse.Namespace, str | StdioServerParameters, str]:
    parser = argparse.ArgumentParser(
        prog="check.py",
        description="Check the upstream fixture surface of an MCP server (URL over Streamable HTTP, or -- COMMAND over stdio).",
    )
    parser.add_argument("--prefix", default="", help="expected prefix of tool and prompt names (default: none)")
    parser.add_argument("--mode", default="legacy", choices=["legacy", "auto", "2026-07-28"], help="protocol negotiation (default: legacy)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    parser.add_argument("target", nargs=argparse.REMAINDER, help="URL, or -- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    rest = list(args.target)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        parser.error("give a URL or -- COMMAND [ARGS...]")
    if not args.timeout > 0:
        parser.error("--timeout must be a positive number of seconds")
    if len(rest) == 1 and rest[0].startswith(("http://", "https://")):
        return args, rest[0], rest[0]
    params = StdioServerParameters(command=rest[0], args=rest[1:], env=dict(os.environ))
    return args, params, " ".join(rest)


def main(argv: list[str]) -> int:
    args, target, label = parse(argv[1:])  # argparse exits 2 on bad usage
    # The SDK logs transport failures with tracebacks; the per-check lines are enough unless debugging.
    logging.basicConfig(level=logging.DEBUG if DEBUG else logging.CRITICAL, stream=sys.stderr)
    checker = Checker(target, args.prefix, args.mode, args.timeout)
    overall = args.timeout * (len(CHECKS) + 2) + LIST_CHANGED_WAIT  # a backstop; each request has its own limit

    async def bounded() -> None:
        with anyio.fail_after(overall):
            await checker.run()

    try:
        anyio.run(bounded)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - e.g. the transport failing outside any check
        if DEBUG:
            traceback.print_exception(e)
        for check in CHECKS:
            if check not in checker.checks:
                checker.fail(check, f"not run: {describe(e)}")
        if checker.checks.get("connect") == "ok":
            checker.errors.setdefault("connection", describe(e))
    for check in CHECKS:
        if check not in checker.checks:
            checker.fail(check, "not run")
    ok = all(checker.checks[c] == "ok" for c in CHECKS) and "connection" not in checker.errors
    out = {
        "ok": ok,
        "target": label,
        "mode": args.mode,
        **checker.summary,
        "checks": {c: checker.checks[c] for c in CHECKS},
        "errors": checker.errors,
    }
    skipped = [check for check, message in checker.errors.items() if message.startswith("not run")]
    for check, message in checker.errors.items():
        if check not in skipped:
            print(f"check.py: FAIL {check}: {message}", file=sys.stderr)
    if skipped:
        print(f"check.py: not run: {', '.join(skipped)}", file=sys.stderr)
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
