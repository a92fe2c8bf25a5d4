"""``GET /ws/terminal/{pane}``: one tmux pane in a browser terminal, over a WebSocket.

``pane`` is a pane id (``%N``, sent URL-encoded as ``%25N``) or anything that names a session
of roost's tmux server (a session key, a pid, a unique name). ``?cols=C&rows=R`` says the size
the browser starts at, so the first paint is already the right size.

Server to browser:

- binary messages: the pane's output, to write to the terminal as it is;
- ``{"type":"reset","cols":C,"rows":R}``: clear the terminal and make it C x R; the binary
  messages that follow repaint it (scrollback, screen, cursor, modes);
- ``{"type":"size","cols":C,"rows":R}``: the pane's size changed (it is shared: see
  :mod:`roost.pane.tmux.view`); resize before writing what follows. A pane whose output comes
  through the daemon's tap is repainted at its new size instead (a ``reset``);
- ``{"type":"closed","reason":…}``, then the socket closes (1000): the pane is gone.

Browser to server, JSON text messages of at most 64 KiB:

- ``{"type":"input","data":TEXT}``: keys as typed, UTF-8; with ``"paste":true`` a paste
  (bracketed when the program asked for it); with ``"binary":true`` each character of TEXT is
  one byte (xterm.js's ``onBinary``);
- ``{"type":"resize","cols":C,"rows":R}``: the browser's terminal size.

Anything else closes the socket before it reaches the pane: 1009 when larger than 64 KiB,
1008 with the reason otherwise (not JSON, nested too deep, an unknown type, a missing or wrong
field).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from roost.actions import terminals
from roost.actions.terminals import MAX_SIZE, Bytes, Closed, PaneGone, PaneView, Reset, Size, TmuxError
from roost.base.validation import NESTING, too_deep
from roost.faces.api.context import Context

LIMIT = 64 * 1024
"""Bytes one browser message may hold."""
POLICY, TOO_BIG, NORMAL = 1008, 1009, 1000
FLOOD = 0.010
"""Output this soon after the last message is part of a flood."""
GATHER = 0.004
"""How long a flood's next message waits for more of it."""


class Closing(Exception):
    """A browser message the pane must not see; closes the socket with ``code`` and the reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class Input:
    data: bytes
    paste: bool = False


@dataclass(frozen=True)
class Resize:
    cols: int
    rows: int


def _size(doc: dict[str, Any], name: str) -> int:
    value = doc.get(name)
    if type(value) is not int or not 0 < value <= MAX_SIZE:
        raise Closing(POLICY, f"{name} must be an integer from 1 to {MAX_SIZE}")
    return value


def _input(doc: dict[str, Any]) -> Input:
    data = doc.get("data")
    if not isinstance(data, str) or not data:
        raise Closing(POLICY, "input needs data: a non-empty string")
    flags = {name: doc.get(name, False) for name in ("paste", "binary")}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        raise Closing(POLICY, "paste and binary must be true or false")
    try:
        raw = data.encode("latin-1") if flags["binary"] else data.encode()
    except UnicodeEncodeError:
        raise Closing(POLICY, "binary input must hold one byte per character") from None
    return Input(raw, flags["paste"])


def parse(message: Message) -> Input | Resize:
    """One browser message, checked completely before anything reaches the pane."""
    text = message.get("text")
    if text is None:
        raise Closing(POLICY, "messages must be JSON text")
    encoded = text.encode(errors="surrogatepass")
    if len(text) > LIMIT or len(encoded) > LIMIT:
        raise Closing(TOO_BIG, f"a message may hold at most {LIMIT} bytes")
    if too_deep(encoded):
        raise Closing(POLICY, f"a message may nest arrays and objects at most {NESTING} deep")
    try:
        doc = json.loads(text)
    except ValueError:
        raise Closing(POLICY, "a message must be JSON") from None
    if not isinstance(doc, dict):
        raise Closing(POLICY, "a message must be a JSON object")
    kind = doc.get("type")
    if kind == "input":
        return _input(doc)
    if kind == "resize":
        return Resize(_size(doc, "cols"), _size(doc, "rows"))
    raise Closing(POLICY, "type must be input or resize")


def start_size(websocket: WebSocket) -> tuple[int | None, int | None]:
    values = []
    for name in ("cols", "rows"):
        text = websocket.query_params.get(name, "")
        digits = text.isascii() and text.isdigit() and len(text) <= len(str(MAX_SIZE))
        values.append(int(text) if digits and 0 < int(text) <= MAX_SIZE else None)
    return values[0], values[1]


async def _frames(websocket: WebSocket, view: PaneView) -> None:
    """Send the view's frames, output batched into one message per wake-up, until it closes.

    Output that comes while the last message is fresh is a flood, not a keystroke's echo: it
    waits ``GATHER`` seconds so that one message carries what tmux wrote meanwhile. A browser
    spends about as long on each message as on each kilobyte, so a flood cut into tmux's own
    few-kilobyte pieces draws at a fraction of the speed; an echo after a pause goes at once.
    """
    sent = 0.0
    loop = asyncio.get_running_loop()
    while True:
        first = await view.next()
        if loop.time() - sent < FLOOD:
            await asyncio.sleep(GATHER)
        frames = [first, *view.pending()]
        sent = loop.time()
        batch = bytearray()
        for frame in frames:
            if isinstance(frame, Bytes):
                batch += frame.data
                continue
            if batch:
                await websocket.send_bytes(bytes(batch))
                batch.clear()
            if isinstance(frame, Reset):
                await websocket.send_json({"type": "reset", "cols": frame.cols, "rows": frame.rows})
                batch += frame.data
            elif isinstance(frame, Size):
                await websocket.send_json({"type": "size", "cols": frame.cols, "rows": frame.rows})
            elif isinstance(frame, Closed):
                await _closed(websocket, frame.reason)
                return
        if batch:
            await websocket.send_bytes(bytes(batch))


async def _closed(websocket: WebSocket, reason: str) -> None:
    await websocket.send_json({"type": "closed", "reason": reason})
    await websocket.close(NORMAL, reason[:120])


async def _keys(websocket: WebSocket, view: PaneView) -> None:
    """Apply the browser's messages in order; the first bad one closes the socket."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        try:
            action = parse(message)
        except Closing as refused:
            await websocket.close(refused.code, refused.reason)
            return
        with contextlib.suppress(TmuxError, PaneGone):  # a gone pane is reported by the frames
            if isinstance(action, Resize):
                await view.resize(action.cols, action.rows)
            elif action.paste:
                await view.paste(action.data)
            else:
                await view.write(action.data)


async def terminal(websocket: WebSocket) -> None:
    daemon: Context = websocket.app.state.context
    await websocket.accept()
    await serve(websocket, daemon, websocket.path_params["pane"])


def serving(daemon: Context) -> Callable[[WebSocket, str], Awaitable[None]]:
    """The terminal of this daemon for a WebSocket another node relays (:mod:`roost.remote.mesh.relay`),
    opened on ``pane`` exactly as for a browser of this node's own."""

    async def relayed(websocket: WebSocket, pane: str) -> None:
        await serve(websocket, daemon, pane)

    return relayed


async def serve(websocket: WebSocket, daemon: Context, pane: str) -> None:
    """The terminal protocol on an accepted ``websocket``, for the pane ``pane`` names."""
    try:
        view = terminals.view(daemon.door, pane)
    except PaneGone as gone:
        await _closed(websocket, str(gone))
        return
    tasks: list[asyncio.Task[None]] = []
    try:  # however this ends (the pane, the browser, the daemon stopping), the view's client goes
        try:
            await view.open(*start_size(websocket))
        except PaneGone as gone:
            await _closed(websocket, str(gone))
            return
        tasks = [asyncio.create_task(_frames(websocket, view)), asyncio.create_task(_keys(websocket, view))]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError, OSError):
                await task
        await view.close()
