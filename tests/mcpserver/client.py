"""The official SDK's client against a real daemon: over its unix socket (httpx2's ``uds``
transport), over loopback with the bearer token, or through ``rosterd mcp`` (the stdio bridge a
harness starts), one call per connection as a harness's calls come."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.daemon.fixture import Daemon
from tests.runner.conftest import Headless

T = TypeVar("T")
TIMEOUT = 60.0


def unix(daemon: Daemon) -> Client:
    http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(daemon.socket)), timeout=TIMEOUT)
    return Client(streamable_http_client("http://rosterd/mcp", http_client=http))


def tcp(daemon: Daemon, token: str | None = None, headers: dict[str, str] | None = None) -> Client:
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    http = httpx2.AsyncClient(headers=sent, timeout=TIMEOUT)
    return Client(streamable_http_client(f"http://127.0.0.1:{daemon.port}/mcp", http_client=http))


def bridge(daemon: Daemon, command: list[str] | None = None) -> Client:
    """The stdio bridge, started as a harness would start it: by default the command the daemon
    hands to harnesses (this interpreter, ``-m roost.faces.cli.rosterd mcp --socket …``)."""
    argv = command or [sys.executable, "-m", "roost.faces.cli.rosterd", "mcp", "--socket", str(daemon.socket)]
    return Client(StdioServerParameters(command=argv[0], args=argv[1:], env=daemon.env), mode="legacy")


def run(client: Client, work: Callable[[Client], Awaitable[T]]) -> T:
    """Run ``work`` with the client connected, on a loop of its own in a thread of its own: a
    test that also drives a browser has Playwright's loop running on this one."""

    async def go() -> T:
        async with client:
            return await work(client)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(go(), TIMEOUT * 2)).result()


def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    return run(client, lambda c: c.call_tool(tool, arguments))


def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A call that must succeed: its structured result, which its text content says too."""
    result = call(client, tool, **arguments)
    assert not result.is_error, result.structured_content
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content  # type: ignore[no-any-return]


def refused(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A call that must be refused as a tool error: the API's error document for it."""
    result = call(client, tool, **arguments)
    assert result.is_error, result.structured_content
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content  # type: ignore[no-any-return]


def through(headless: Headless, key: str, tool: str, **arguments: Any) -> dict[str, Any]:
    """``tool`` called by headless session ``key``'s own adapter, through the server it was
    offered (a process in that session's tree): ``{"is_error": …, "result": …}``."""
    answer = headless.prompt(key, f"MCP {tool} {json.dumps(arguments)}", wait="idle", timeout_s=60)
    assert answer.status_code == 200, answer.text
    assert answer.json()["wait"]["reached"], answer.text
    return json.loads(answer.json()["record"]["recap"])  # type: ignore[no-any-return]
