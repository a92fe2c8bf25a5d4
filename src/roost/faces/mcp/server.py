"""The MCP server: the official SDK's low-level server and its streamable-HTTP transport, as
one ASGI endpoint the daemon mounts at ``/mcp`` on both of its listeners.

The shortest use (the daemon does this)::

    mcp = McpServer(Context(Door(live, tmux=tmux, runner=runner)), peer=wire.peer_process)
    app = create_app(context, mounts=[Route("/mcp", mcp)])
    async with mcp.serving():
        ...  # serve until told to stop

The SDK takes about a second to import, so :meth:`McpServer.serving` loads it off the loop
after the daemon answers, as the runner loads ACP's; a call that arrives first waits for it.
The transport is stateless and answers in plain JSON: each POST is one exchange, nothing is
kept between them, so a daemon that restarts breaks no harness's connection, and each call is
identified on its own (:mod:`roost.faces.mcp.caller`).

A tool's refusal is a tool result with ``isError`` set, whose structured content (and text, as
JSON) is the API's error document for the same failure plus its HTTP ``status``:
``{"error": "…", "status": 409, "code": "busy"}``; a bad argument is ``bad_argument`` with the
``field``, in the door's sentence (:mod:`roost.base.validation`). An unknown tool is a JSON-RPC
error, as the protocol asks, and so is a body that is no JSON-RPC 2.0 message, checked before
the SDK sees it so that the caller reads a sentence of rosterd's, never the validator's report.
Neither a prompt's text nor anything derived from it is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from roost import __version__
from roost.base.errors import Unavailable, UsageError
from roost.base.validation import NESTING, too_deep
from roost.faces.mcp.caller import identify
from roost.faces.mcp.tools import TOOLS, Context, call
from roost.truth.roster import ProcessId

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

log = logging.getLogger("rosterd")

NAME = "rosterd"
BODY_LIMIT = 512 * 1024
"""Bytes a POST may hold: the longest prompt, every character escaped, and the envelope."""
LOAD_TIMEOUT = 30.0
"""Seconds a call waits for the SDK to load before it is answered 503."""
INSTRUCTIONS = (
    "rosterd keeps the roster of every coding-agent session on this machine. Address a session "
    "by its key, a pid, or its display name; send it work with session.send and wait_until "
    "idle, then read its recap. Nothing is scheduled: every prompt is sent by someone."
)
NOT_A_MESSAGE = (
    'the body is not one JSON-RPC 2.0 message: a request has "jsonrpc": "2.0", an id (a string '
    "or a number), a method, and params that are an object"
)


class McpServer:
    """The ``rosterd`` MCP server; an ASGI app (mount it on a route) once :meth:`serving`."""

    def __init__(self, context: Context, peer: Callable[[Scope], ProcessId | None]) -> None:
        self.context = context
        self._peer = peer
        """Names the process at the other end of a request's connection, when the listener knows."""
        self._manager: StreamableHTTPSessionManager | None = None
        self._ready = asyncio.Event()
        self._open = False

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Load the SDK and run its transport's task group until the block ends."""
        stop = asyncio.Event()
        running = asyncio.ensure_future(self._run(stop))
        try:
            yield
        finally:
            stop.set()
            self._open = False
            await running

    async def _run(self, stop: asyncio.Event) -> None:
        try:
            await asyncio.to_thread(importlib.import_module, "mcp.server.streamable_http_manager")
            self._manager = self._build()
            async with self._manager.run():
                self._open = True
                self._ready.set()
                await stop.wait()
        except Exception:
            log.exception("the MCP server stopped: its calls are answered 503")
        finally:
            self._open = False
            self._ready.set()

    def _build(self) -> StreamableHTTPSessionManager:
        from mcp.server.lowlevel import Server
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        server: Server[Any] = Server(
            NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            get_tool_input_schema=lambda name: _schema(name),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        return StreamableHTTPSessionManager(
            server, json_response=True, stateless=True, max_request_body_size=BODY_LIMIT
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), LOAD_TIMEOUT)
        if not self._open or self._manager is None:
            down = Unavailable("the MCP server is not running")
            answer = JSONResponse({"error": down.message}, status_code=down.status)
            await answer(scope, receive, send)
            return
        if scope.get("method") == "POST":
            body, more = await _start_of_body(receive)
            refusal = None if more else _not_a_message(body)
            if refusal is not None:
                answer = JSONResponse(
                    {"jsonrpc": "2.0", "id": None, "error": refusal}, status_code=UsageError.status
                )
                await answer(scope, receive, send)
                return
            receive = _replayed(body, more, receive)
        await self._manager.handle_request(scope, receive, send)

    async def _list_tools(self, _ctx: Any, _params: Any) -> Any:
        from mcp.types import ListToolsResult, Tool, ToolAnnotations

        return ListToolsResult(
            tools=[
                Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=_schema(tool.name) or {},
                    annotations=ToolAnnotations(read_only_hint=tool.read_only, open_world_hint=False),
                )
                for tool in TOOLS.values()
            ]
        )

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS, CallToolResult, TextContent

        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"no tool {params.name!r}; see tools/list")
        request = ctx.request
        process = self._peer(request.scope) if request is not None else None
        caller = identify(self.context.door.live.roster, process)
        result, is_error = await call(self.context, tool, caller, params.arguments or {})
        text = TextContent(type="text", text=json.dumps(result))
        return CallToolResult(content=[text], structured_content=result, is_error=is_error)


async def _start_of_body(receive: Receive) -> tuple[bytes, bool]:
    """The body, read up to one byte past :data:`BODY_LIMIT`, and whether more of it is left
    (a body that long is the transport's to refuse, 413)."""
    body, more = b"", True
    while more and len(body) <= BODY_LIMIT:
        message = await receive()
        if message["type"] != "http.request":
            return body, False
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body, more


def _replayed(body: bytes, more: bool, receive: Receive) -> Receive:
    """``receive`` with the part of the body already read given back first."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": more}

    return again


def _not_a_message(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error for a body that is not one JSON-RPC 2.0 message, in a sentence of
    rosterd's (the SDK's own answer is its validator's report, links and all), or None."""
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
    from pydantic import ValidationError

    if too_deep(body):
        return {
            "code": INVALID_REQUEST,
            "message": f"the body nests arrays and objects more than {NESTING} deep",
        }
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return {"code": PARSE_ERROR, "message": "the body is not JSON"}
    try:
        jsonrpc_message_adapter.validate_python(doc, by_name=False)
    except ValidationError:
        return {"code": INVALID_REQUEST, "message": NOT_A_MESSAGE}
    return None


def _schema(name: str) -> dict[str, Any] | None:
    tool = TOOLS.get(name)
    if tool is None:
        return None
    schema = tool.model.model_json_schema()
    schema.pop("title", None)
    return schema
