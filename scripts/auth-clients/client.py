#!/usr/bin/env python3
"""End-to-end OAuth client-credentials check with the official MCP Python SDK (`mcp`, pinned in
requirements.txt; MIT licensed).

usage: client.py URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]

Connects to the MCP server at URL over Streamable HTTP with the SDK's
ClientCredentialsOAuthProvider, which on the server's 401 discovers the authorization server
(WWW-Authenticate resource_metadata -> RFC 9728 protected resource metadata ->
authorization_servers -> RFC 8414 / OIDC metadata) and fetches a token with the
client_credentials grant. Then lists the tools, calls TOOL with ARGS_JSON and prints one line
of JSON to stdout:  {"tools": [names...], "result": <CallToolResult>}.  Exit 0 on success; on
any failure the error goes to stderr and the exit status is 1.

Environment (optional):
  MCP_AUTH_ISSUER       the authorization server's issuer; credentials are then only sent to it
                        (without it the SDK warns that omitting the issuer is deprecated)
  MCP_AUTH_AUTH_METHOD  client_secret_basic (default) or client_secret_post
  MCP_AUTH_TIMEOUT      overall time limit in seconds (default 30)
  MCP_AUTH_DEBUG=1      SDK debug logging and full tracebacks on stderr
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

DEBUG = os.environ.get("MCP_AUTH_DEBUG", "") not in ("", "0")


class MemoryTokenStorage:
    """The SDK's TokenStorage protocol, kept in memory for the life of this process."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client_info = client_info


def describe(exc: BaseException) -> str:
    """One readable line per leaf error; task groups wrap failures in (nested) exception groups."""
    group = getattr(exc, "exceptions", None)
    if isinstance(group, tuple) and group:  # BaseExceptionGroup (or its backport on Python 3.10)
        return "; ".join(describe(e) for e in group)
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" (caused by {type(cause).__name__}: {cause})"
    return text


async def run(url: str, client_id: str, client_secret: str, tool: str, args: dict[str, Any], scope: str | None,
              timeout: float) -> dict[str, Any]:
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryTokenStorage(),
        client_id=client_id,
        client_secret=client_secret,
        token_endpoint_auth_method=os.environ.get("MCP_AUTH_AUTH_METHOD") or "client_secret_basic",  # type: ignore[arg-type]
        scope=scope,
        issuer=os.environ.get("MCP_AUTH_ISSUER") or None,
    )
    with anyio.fail_after(timeout):
        async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(timeout)) as http:
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=timeout) as client:
                names: list[str] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    names.extend(t.name for t in page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                result = await client.call_tool(tool, args)
                return {"tools": names, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}


def main(argv: list[str]) -> int:
    if len(argv) not in (6, 7):
        print(f"usage: {os.path.basename(argv[0])} URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]", file=sys.stderr)
        return 1
    url, client_id, client_secret, tool, args_json = argv[1:6]
    scope = argv[6] if len(argv) == 7 and argv[6] else None
    try:
        args = json.loads(args_json)
    except ValueError as e:
        print(f"client.py: ARGS_JSON is not JSON: {e}", file=sys.stderr)
        return 1
    if not isinstance(args, dict):
        print("client.py: ARGS_JSON must be a JSON object", file=sys.stderr)
        return 1
    try:
        timeout = float(os.environ.get("MCP_AUTH_TIMEOUT") or 30)
    except ValueError:
        print("client.py: MCP_AUTH_TIMEOUT must be a number of seconds", file=sys.stderr)
        return 1

    # The SDK logs its OAuth failures with full tracebacks; the one-line error below is enough.
    logging.basicConfig(level=logging.DEBUG if DEBUG else logging.CRITICAL, stream=sys.stderr)
    try:
        out = anyio.run(run, url, client_id, client_secret, tool, args, scope, timeout)
    except TimeoutError:
        print(f"client.py: timed out after {timeout:g}s talking to {url}", file=sys.stderr)
        return 1
    except BaseException as e:  # noqa: BLE001 - any failure is reported and exits 1
        if isinstance(e, KeyboardInterrupt):
            raise
        if DEBUG:
            traceback.print_exception(e)
        print(f"client.py: {url}: {describe(e)}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
