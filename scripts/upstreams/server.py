#!/usr/bin/env python3
"""Upstream MCP server fixture on the official MCP Python SDK (`mcp`, pinned in requirements.txt;
MIT licensed), for the gateway's end-to-end tests. Nothing here is this project's code: the point
is a server the project did not write.

usage: server.py stdio          serve one client on stdin/stdout (logs go to stderr)
       server.py http PORT      serve Streamable HTTP on http://127.0.0.1:PORT/mcp (sessions)

Surface (the same as server.mjs, the TypeScript SDK twin):
  tool add(a: int, b: int)    the sum as text, plus structured content {"result": sum}
  tool greet()                elicits {name: string} from the user mid-call (form mode), then
                              "Hello, <name>!"; "No name given." on decline or cancel
  tool slow(seconds: float)   sleeps, then "slept"
  tool hop()                  closes the call's response stream where the transport can (a
                              2025-era HTTP session, which keeps its events for resumption: SSE
                              polling), waits half a second, then "hopped"
  tool grow()                 registers tool `extra` (-> "extra ran") and announces
                              tools/list_changed
  resource fixture://readme   text/plain "the python upstream"
  template fixture://items/{id}   "item <id>"
  prompt review(code: str)    one user message containing the code

The SDK serves both protocol eras on both transports; the client decides. On a 2025-era
connection (the `initialize` handshake) greet's question is an `elicitation/create` request sent
to the client while the call is open, and grow sends `notifications/tools/list_changed` on the
connection's standalone channel (stdout on stdio, the GET SSE stream over HTTP). On a 2026-07-28
connection the same resolver answers with `input_required` and the change is published to
`subscriptions/listen` streams. Note that this SDK's MCPServer does not advertise
`tools.listChanged` in its 2025-era capabilities (its run helpers pass default
NotificationOptions), although it sends the notification.
"""

from __future__ import annotations

import copy
import sys
from typing import Annotated, Any

import anyio
from pydantic import BaseModel, Field

from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.streamable_http import EventMessage, EventStore

server = MCPServer(
    "upstream-py",
    version="1.0.0",
    instructions="Test upstream on the official MCP Python SDK.",
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Name(BaseModel):
    name: str = Field(description="Your name")


def ask_name() -> Elicit[Name]:
    """The question greet asks; the SDK sends it mid-call (2025 era) or as input_required (2026-07-28)."""
    return Elicit("What is your name?", Name)


@server.tool(structured_output=False)
def greet(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Ask the user for their name, then greet them."""
    if isinstance(answer, AcceptedElicitation):
        return f"Hello, {answer.data.name}!"
    return "No name given."


@server.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    await anyio.sleep(max(0.0, seconds))
    return "slept"


@server.tool(structured_output=False)
async def hop(ctx: Context) -> str:
    """Close this call's response stream where the transport can, wait half a second, then answer."""
    await ctx.close_sse_stream()
    await anyio.sleep(0.5)
    return "hopped"


class MemoryEventStore(EventStore):
    """What the 2025-era sessions send, kept for resumption: a stream that closes early is resumed
    by a GET with Last-Event-ID, which replays what came after that event on the same stream. A
    priming event stores no message, and is never replayed."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []  # (event id, stream id, message)

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        index = next((i for i, event in enumerate(self.events) if event[0] == last_event_id), None)
        if index is None:
            return None
        stream_id = self.events[index][1]
        for event_id, stream, message in self.events[index + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


def extra() -> str:
    """A tool that exists only after grow()."""
    return "extra ran"


@server.tool(structured_output=False)
async def grow(ctx: Context) -> str:
    """Register the tool `extra` and announce that the tool list changed."""
    if all(tool.name != "extra" for tool in await server.list_tools()):
        server.add_tool(extra, name="extra", structured_output=False)
    # 2025 era: an unsolicited notification on this connection (dropped by the SDK on 2026-07-28).
    await ctx.session.send_tool_list_changed()
    # 2026-07-28: published to every subscriptions/listen stream that asked for tool changes.
    await ctx.notify_tools_changed()
    return "grew extra"


@server.resource("fixture://readme", name="readme", mime_type="text/plain", description="About this upstream")
def readme() -> str:
    return "the python upstream"


@server.resource("fixture://items/{id}", name="item", mime_type="text/plain", description="One item by id")
def item(id: str) -> str:
    return f"item {id}"


@server.prompt()
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review this code:\n\n{code}"


def serve_http(port: int) -> None:
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    # uvicorn's access log goes to stdout by default; keep every log line on stderr.
    log_config = copy.deepcopy(LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    app = server.streamable_http_app(
        streamable_http_path="/mcp", host="127.0.0.1", event_store=MemoryEventStore(), retry_interval=100
    )
    print(f"upstream-py: serving http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_config=log_config, log_level="info")


def main(argv: list[str]) -> int:
    if argv[1:] == ["stdio"]:
        print("upstream-py: serving on stdio", file=sys.stderr, flush=True)
        server.run("stdio")
        return 0
    if len(argv) == 3 and argv[1] == "http" and argv[2].isdigit() and 0 < int(argv[2]) < 65536:
        serve_http(int(argv[2]))
        return 0
    print("usage: server.py stdio | server.py http PORT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
