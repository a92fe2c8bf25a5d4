"""The daemon's end of one holder: an ACP client (the official SDK) over the holder's socket.

A link turns what the adapter sends into :class:`~roost.headless.runner.traffic.Said` values for the
runner to claim, answers the adapter's permission requests (at once under policy ``auto``,
when a person does under ``attention``) and sends prompts, cancels and mode changes. It owns no
process: the holder does, and outlives the link.

Connecting is two steps. :func:`handshake` asks the holder for its replay (the holder's own
``_roost/replay``, plain JSON-RPC over the socket) so the roster can be rebuilt before the SDK,
which takes most of a second to import, is loaded; :meth:`Link.attach` then hands the same
socket to the SDK, which reads the unanswered requests the holder sends again after the replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.agents.mcpconfig import StdioServer
from roost.base import paths, procfs
from roost.headless.runner.traffic import Said, Traffic, stamp

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection
    from acp.schema import McpServerStdio

PROTOCOL_VERSION = 1
HANDSHAKE_TIMEOUT = 5.0
SEND_TIMEOUT = 5.0
"""Seconds a prompt has to be written to the holder's socket before the call fails."""
ALLOW_KINDS = ("allow_once", "allow_always")


class LinkError(Exception):
    """The holder or its adapter refused or failed a step; the message says which.

    Not a failure of :mod:`roost.base.errors`: the runner answers a launch, a prompt or a cancel
    that met it as :class:`~roost.base.errors.AdapterFailed` (``adapter_failed``)."""


@dataclass
class Handshake:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    replay: dict[str, Any]
    peer: int
    """The pid that listens on the holder's socket, as the kernel names it (``SO_PEERCRED``)."""


@dataclass
class Asked:
    """A connection to a holder whose replay has been asked for and not read yet."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    peer: int


async def handshake(socket: Path, timeout: float = HANDSHAKE_TIMEOUT) -> Handshake:
    """Connect to a holder and read its replay: notifications, unanswered requests, state."""
    asked = await ask(socket, timeout)
    try:
        return await replay(asked, timeout)
    except TimeoutError as error:
        asked.writer.close()
        raise LinkError(f"the holder's replay failed: {error}") from None


async def ask(socket: Path, timeout: float = HANDSHAKE_TIMEOUT) -> Asked:
    """Connect to a holder and ask for its replay. A holder that is stopped or busy still
    accepts the connection (the kernel queues it), so this fails only when nothing listens."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(str(socket), limit=paths.HOLDER_LINE_LIMIT), timeout
        )
    except (OSError, TimeoutError) as error:
        raise LinkError(f"the holder at {socket} does not answer: {error}") from None
    peer, _ = procfs.peer(writer.get_extra_info("socket"))
    request = {"jsonrpc": "2.0", "id": "roost-replay", "method": "_roost/replay", "params": {}}
    writer.write(json.dumps(request).encode() + b"\n")
    return Asked(reader, writer, peer)


async def replay(asked: Asked, timeout: float | None) -> Handshake:
    """The holder's answer to :func:`ask`. ``TimeoutError`` (the connection left open) when it
    has not come within ``timeout`` seconds (None: wait as long as it takes); a
    :class:`LinkError` (the connection closed) when the holder refused or went away."""
    reader, writer = asked.reader, asked.writer
    try:
        await writer.drain()
        while True:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if not line:
                raise LinkError("the holder closed the connection during its replay")
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == "roost-replay" and "method" not in message:
                break
    except TimeoutError:
        raise
    except (OSError, ValueError) as error:
        writer.close()
        raise LinkError(f"the holder's replay failed: {error}") from None
    except LinkError:
        writer.close()
        raise
    result = message.get("result")
    if not isinstance(result, dict):
        writer.close()
        raise LinkError("the holder's replay is not an object")
    return Handshake(reader, writer, result, asked.peer)


def replayed(traffic: Traffic, notifications: list[Any], times: list[Any] | None = None) -> list[Said]:
    """The replay buffer fed through ``traffic`` as if it were live: what each step said, at
    the time the holder stamped it (``times``, one per notification; an older holder's
    replay has none, and its steps are then claimed as of now).

    The runner claims only the state it ends in, so a history that ends idle never flips the
    record to active on the way, and no replayed turn counts as new."""
    out: list[Said] = []
    stamps = times if isinstance(times, list) and len(times) == len(notifications) else []
    for index, message in enumerate(notifications):
        if not isinstance(message, dict):
            continue
        method, params = message.get("method"), message.get("params")
        params = params if isinstance(params, dict) else {}
        said: Said | None = None
        if method == "_roost/turn_started":
            said = traffic.turn_started()
        elif method == "_roost/turn_ended":
            said = traffic.turn_ended(params)
        elif method == "session/update" and isinstance(params.get("update"), dict):
            said = traffic.update(params["update"])
        if said is not None:
            at = stamp(stamps[index]) if stamps else None
            out.append(said if said.at is not None or at is None else replace(said, at=at))
    return out


class Link:
    """One holder's connection, speaking ACP through the SDK as the client."""

    def __init__(
        self,
        traffic: Traffic,
        say: Callable[[Said], None],
        policy: str,
    ) -> None:
        self.traffic = traffic
        self._say = say
        self.policy = policy
        self.session_id: str | None = None
        self.agent_info: dict[str, Any] = {}
        """What the adapter said it is in ``initialize`` (``name``, ``version``)."""
        self.forks: bool | None = None
        """Whether the adapter offers ``session/fork`` (its ``initialize`` answer's
        ``sessionCapabilities.fork``); None until it has answered."""
        self.loading = False
        self._conn: ClientSideConnection | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._answer: asyncio.Future[tuple[str | None, str | None]] | None = None
        self._turn: asyncio.Future[Any] | None = None
        self._prompt_sent = asyncio.Event()
        self._asked_at: dict[str, float] = {}
        """When the holder got each permission request it sends again, by tool call id."""

    def attach(self, shaken: Handshake) -> None:
        """Hand the holder's socket to the SDK; from now on the adapter's lines reach here."""
        from acp.client.connection import ClientSideConnection

        self._asked_at = _asked_at(shaken.replay)
        self._writer = shaken.writer
        self._conn = ClientSideConnection(self, shaken.writer, shaken.reader, observers=[self._observe])

    def _observe(self, event: Any) -> None:
        """The SDK calls this once a message is written: a prompt is then the holder's."""
        if event.direction == "outgoing" and event.message.get("method") == "session/prompt":
            self._prompt_sent.set()

    @property
    def conn(self) -> ClientSideConnection:
        if self._conn is None:
            raise LinkError("the link to the holder is closed")
        return self._conn

    async def close(self) -> None:
        """Drop the connection; the holder and its adapter keep running, and a pending
        permission stays unanswered, for the next daemon to answer."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
        self._conn = None

    # The runner's verbs.

    async def initialize(self) -> None:
        from acp.schema import ClientCapabilities, Implementation

        answer = await _call(
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="rosterd", version="1"),
            ),
            "initialize",
        )
        info = answer.agent_info
        self.agent_info = {} if info is None else info.model_dump(mode="json", exclude_none=True)
        offered = answer.agent_capabilities.session_capabilities if answer.agent_capabilities else None
        self.forks = offered is not None and offered.fork is not None

    async def open(self, cwd: str, servers: Sequence[StdioServer] = ()) -> dict[str, Any]:
        """``session/new`` (after :meth:`initialize`), offering the harness ``servers`` over
        MCP; the new session's answer as JSON."""
        conn = self.conn
        answer = await _call(conn.new_session(cwd=cwd, mcp_servers=_mcp(servers)), "session/new")
        self.session_id = answer.session_id
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def load(self, cwd: str, session_id: str, servers: Sequence[StdioServer] = ()) -> dict[str, Any]:
        """``session/load`` (after :meth:`initialize`), offering ``servers`` again: the history
        it replays changes no state."""
        conn = self.conn
        self.loading = True
        try:
            answer = await _call(
                conn.load_session(cwd=cwd, session_id=session_id, mcp_servers=_mcp(servers)),
                "session/load",
            )
        finally:
            self.loading = False
        self.session_id = session_id
        return {} if answer is None else answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def fork(self, cwd: str, session_id: str, servers: Sequence[StdioServer] = ()) -> dict[str, Any]:
        """``session/fork`` of ``session_id`` (after :meth:`initialize`): a new session in
        ``cwd`` that starts from that one's conversation, offering ``servers`` again; its answer
        as JSON. What the adapter replays of the history meanwhile changes no state."""
        conn = self.conn
        self.loading = True
        try:
            answer = await _call(
                conn.fork_session(session_id=session_id, cwd=cwd, mcp_servers=_mcp(servers)),
                "session/fork",
            )
        finally:
            self.loading = False
        self.session_id = answer.session_id
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def set_option(self, config_id: str, value: str) -> None:
        assert self.session_id is not None
        await _call(
            self.conn.set_config_option(config_id=config_id, session_id=self.session_id, value=value),
            "session/set_config_option",
        )

    async def set_mode(self, mode_id: str) -> None:
        assert self.session_id is not None
        await _call(
            self.conn.set_session_mode(session_id=self.session_id, mode_id=mode_id), "session/set_mode"
        )

    async def prompt(self, text: str) -> None:
        """Send the prompt and return once it is written to the holder's socket, so a daemon
        killed right after still leaves the turn with the holder; the turn's end comes back as
        the holder's ``_roost/turn_ended``."""
        from acp.helpers import text_block

        assert self.session_id is not None
        self._say(self.traffic.turn_started())
        self._prompt_sent.clear()
        # Kept, so the task is not collected mid-turn (the loop holds tasks weakly).
        self._turn = asyncio.ensure_future(
            self.conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        )
        self._turn.add_done_callback(_quiet)
        sent = asyncio.ensure_future(self._prompt_sent.wait())
        await asyncio.wait({sent, self._turn}, timeout=SEND_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if not sent.done():
            sent.cancel()
            self._say(self.traffic.turn_ended({"error": {"message": "the prompt could not be sent"}}))
            raise LinkError("the prompt could not be written to the holder")

    async def cancel(self) -> None:
        """``session/cancel``; a pending permission is answered ``cancelled`` first, as ACP asks."""
        self._withdraw()
        if self.session_id is not None:
            await _call(self.conn.cancel(session_id=self.session_id), "session/cancel")

    def answer(self, option_id: str | None, reason: str | None = None) -> None:
        """Answer the pending permission with one of the adapter's option ids (None: cancelled);
        a reason travels in the answer's ``_meta``, for an adapter that reads it."""
        if self._answer is None or self._answer.done():
            raise LinkError("nothing is pending")
        self._answer.set_result((option_id, reason))
        said = self.traffic.answered()  # closed at once: every client sees it before the adapter acts
        if said is not None:
            self._say(said)

    def _withdraw(self) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result((None, None))

    # The ACP client's side, called by the SDK.

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if self.loading:
            return
        said = self.traffic.update(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        if said is not None:
            self._say(said)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        offered = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        if self.policy == "auto":
            chosen = _allow(offered)
            if chosen is not None:
                return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))
        said = self.traffic.asked(call, offered)
        at = self._asked_at.pop(str(call.get("toolCallId")), None)  # asked before this daemon was
        self._say(said if at is None else replace(said, at=at))
        self._answer = asyncio.get_running_loop().create_future()
        try:
            chosen, reason = await self._answer
        finally:
            self._answer = None
        said = self.traffic.answered()
        if said is not None:
            self._say(said)
        meta = {"reason": reason} if reason else None
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"), field_meta=meta)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen), field_meta=meta
        )

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "roost/turn_ended":
            # A request the turn left open is over with it (Codex withdraws its permission
            # request with a ``$/cancel_request`` the SDK does not route): answer it cancelled.
            self._withdraw()
            self._say(self.traffic.turn_ended(params))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    def on_connect(self, conn: Any) -> None:
        pass


def _asked_at(replay: dict[str, Any]) -> dict[str, float]:
    """The holder's time for each permission request its replay sends again, by tool call id."""
    pending, times = replay.get("pending"), replay.get("pending_times")
    if not isinstance(pending, list) or not isinstance(times, list) or len(pending) != len(times):
        return {}
    out = {}
    for request, at in zip(pending, times, strict=True):
        params = request.get("params") if isinstance(request, dict) else None
        call = params.get("toolCall") if isinstance(params, dict) else None
        when = stamp(at)
        if (
            isinstance(call, dict)
            and when is not None
            and request.get("method") == "session/request_permission"
        ):
            out[str(call.get("toolCallId"))] = when
    return out


def _allow(options: list[dict[str, Any]]) -> str | None:
    """The option policy ``auto`` picks: allow this once, never "always" on the person's behalf."""
    for kind in ALLOW_KINDS:
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return option["optionId"]
    return None


async def _call(step: Any, what: str) -> Any:
    from acp import RequestError

    try:
        return await step
    except RequestError as error:
        raise LinkError(f"{what} failed: {error}") from None
    except ConnectionError:
        raise LinkError(f"{what} failed: the holder's connection closed") from None


def _quiet(task: asyncio.Future[Any]) -> None:
    """A prompt's own answer is read from ``_roost/turn_ended``; its failure is not news here."""
    if not task.cancelled():
        task.exception()


def _mcp(servers: Sequence[StdioServer]) -> list[McpServerStdio]:
    """The MCP servers as ACP's ``mcpServers`` names them (stdio: a command and its arguments)."""
    from acp.schema import McpServerStdio

    return [McpServerStdio(name=s.name, command=s.command, args=list(s.args), env=[]) for s in servers]
