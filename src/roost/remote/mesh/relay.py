"""A terminal of another node's pane, opened through the node a person is logged into: the
terminal's WebSocket relayed over the swarm.

The browser speaks the terminal protocol of :mod:`roost.faces.api.terminal` to its own node, which
opens one WebSocket to the session's owner, ``GET /swarm/terminal/{key}`` (the browser's
``?cols=&rows=`` passed on), signed like every peer request (the opening request's method,
path with query, recipient, timestamp and nonce; :mod:`roost.remote.mesh.listener`) over TLS pinned
to the owner's own certificate. Then :func:`pipe` passes every message along unchanged, both
ways, and the owner's close (its code and reason) back to the browser.

On the owner the route sits behind the signed door, so whoever opens it is a current member,
vouching for the person logged into it as it does for a forwarded act. The key must name one
of the owner's own sessions: a key with another node's prefix is closed ``not_owner`` (1008),
so a terminal is never relayed a second time. Past that the owner opens the pane exactly as
for a browser of its own (``serve``, the API's own terminal, handed in by the daemon once the
faces exist): the same view of the pane and the same check of every message before it
reaches the pane. The relaying node checks nothing the owner checks, and decides nothing. A
member revoked (or gone) while a terminal is open for it has it closed at once (1008), as its
roster stream is.

Nothing waits on a lost owner: the connection is opened within the dialer's bound and kept
alive by pings; an owner that does not answer is :class:`~roost.base.errors.PeerUnreachable` at
once, and a link that dies closes the browser's socket with 1011, from which a browser
reconnects as it would after a restart of its own node.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import quote

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from roost.actions.remote import refuse_elsewhere
from roost.base.errors import PEER_UNREACHABLE, Conflict, PeerUnreachable
from roost.remote.mesh import listener, tls
from roost.remote.mesh.membership import Membership

log = logging.getLogger("rosterd.swarm")

PATH = "/swarm/terminal/{key}"
MAX_MESSAGE = 16 * 1024 * 1024
"""Bytes one relayed message may hold: a pane's repaint with its scrollback, with room."""
PING_S = 10.0
"""Seconds between pings on the link to the owner, and the wait for each pong: a link behind a
pulled cable is found dead within twice this."""
POLICY, LOST, NORMAL, TRY_LATER = 1008, 1011, 1000, 1013
RELAYED_CODES = range(1000, 5000)
NOT_SENDABLE = frozenset({1005, 1006, 1015})
"""Close codes a peer may report but no endpoint may send: a relay closes 1011 for those."""

ENDED = (asyncio.CancelledError, WebSocketDisconnect, ConnectionClosed, RuntimeError, OSError)
"""How either end of a relay may have ended while it was being taken down."""

Serve = Callable[[WebSocket, str], Awaitable[None]]
"""The owner's terminal for a WebSocket already accepted, on the pane its key names."""


class Relay:
    """Both ends of a relayed terminal: the owner's route and the relaying node's dial."""

    def __init__(self, membership: Membership, trust: tls.Trust, timeout: float) -> None:
        self.membership = membership
        self.trust = trust
        self.timeout = timeout
        self.serve: Serve | None = None
        """Filled by the daemon once its API exists; a terminal asked for before is refused as a
        busy node's (1013, try again later)."""
        self._served: dict[str, set[asyncio.Event]] = {}
        """The terminals this node serves to each member, by the event that ends one."""

    def sync(self) -> None:
        """The membership changed: every terminal served to a node that is no current member
        (revoked, or gone) ends now, as its roster stream does."""
        current = {member.node_id for member in self.membership.peers()}
        for node_id, ends in self._served.items():
            if node_id not in current:
                for end in ends:
                    end.set()

    def route(self) -> WebSocketRoute:
        return WebSocketRoute(PATH, self._owner)

    async def _owner(self, websocket: WebSocket) -> None:
        """``GET /swarm/terminal/{key}``: a member relays a terminal of this node's pane."""
        key = websocket.path_params["key"]
        sender = listener.peer(websocket)
        await websocket.accept()
        try:
            refuse_elsewhere(key, self.membership.identity.node_id)
        except Conflict as refused:
            await websocket.close(POLICY, f"{refused.extra['code']}: {refused.message}"[:120])
            return
        if self.serve is None:
            await websocket.close(TRY_LATER, "this node is still starting")
            return
        log.info("terminal of %s opened for %s", key, sender.name)
        end = asyncio.Event()
        self._served.setdefault(sender.node_id, set()).add(end)
        serving, ending = asyncio.create_task(self.serve(websocket, key)), asyncio.create_task(end.wait())
        try:
            await asyncio.wait((serving, ending), return_when=asyncio.FIRST_COMPLETED)
        finally:
            ends = self._served[sender.node_id]
            ends.discard(end)
            if not ends:
                del self._served[sender.node_id]
            for task in (serving, ending):
                task.cancel()
            for task in (serving, ending):
                with contextlib.suppress(*ENDED):
                    await task
        if end.is_set():
            with contextlib.suppress(*ENDED):
                await websocket.close(POLICY, f"{sender.name} is no longer a member of this swarm")

    @contextlib.asynccontextmanager
    async def open(self, node_id: str, key: str, query: str) -> AsyncIterator[ClientConnection]:
        """The owner's end of a terminal of ``key`` on member ``node_id``; PeerUnreachable when
        it is no member or does not take the connection."""
        member = self.membership.members.get(node_id)
        if member is None or member.revoked:
            raise PeerUnreachable(f"node {node_id} is no member of this node's swarm", code=PEER_UNREACHABLE)
        path = PATH.format(key=quote(key, safe="")) + (f"?{query}" if query else "")
        headers = self.membership.sign("GET", path, b"", member.node_id)
        pinned = self.trust.client_for(member.node_id)
        if pinned is None:
            raise PeerUnreachable(f"node {node_id} is no member of this node's swarm", code=PEER_UNREACHABLE)
        try:
            connection = await connect(
                f"wss://{member.address}{path}",
                ssl=pinned,
                server_hostname="",
                additional_headers=headers,
                proxy=None,
                compression=None,
                user_agent_header=None,
                open_timeout=self.timeout,
                ping_interval=PING_S,
                ping_timeout=PING_S,
                max_size=MAX_MESSAGE,
            )
        except InvalidStatus as refused:
            status = refused.response.status_code
            why = (
                f"{member.name} ({member.address}) refused the terminal (HTTP {status}): it no longer "
                "takes this node as a member"
            )
            raise PeerUnreachable(why, code=PEER_UNREACHABLE, address=member.address) from None
        except (OSError, TimeoutError, InvalidHandshake, ssl.SSLError) as error:
            why = f"{member.name} ({member.address}) did not answer: {error or type(error).__name__}"
            raise PeerUnreachable(why, code=PEER_UNREACHABLE, address=member.address) from None
        try:
            yield connection
        finally:
            await connection.close()


async def pipe(browser: WebSocket, owner: ClientConnection) -> None:
    """Pass messages both ways until either end closes; the owner's close code and reason reach
    the browser as they were sent (1011 for a link that died), the browser's leaving closes the
    owner's end."""

    async def up() -> bool:
        """Until the browser leaves (True) or the owner's end is closed (False)."""
        while True:
            message = await browser.receive()
            if message["type"] == "websocket.disconnect":
                return True
            data = message.get("text")
            try:
                await owner.send(data if data is not None else message.get("bytes") or b"")
            except ConnectionClosed:
                return False

    async def down() -> tuple[int, str]:
        with contextlib.suppress(ConnectionClosed):
            async for message in owner:
                if isinstance(message, str):
                    await browser.send_text(message)
                else:
                    await browser.send_bytes(message)
        code, reason = owner.close_code, owner.close_reason or ""
        if code is None or code not in RELAYED_CODES or code in NOT_SENDABLE:
            return LOST, "the link to the session's node was lost"
        return code, reason

    sending, receiving = asyncio.create_task(up()), asyncio.create_task(down())
    try:
        await asyncio.wait((sending, receiving), return_when=asyncio.FIRST_COMPLETED)
        if sending.done() and sending.result():
            await owner.close(NORMAL, "the browser left")
            return
        code, reason = await receiving
        with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
            await browser.close(code, reason[:120])
    finally:
        for task in (sending, receiving):
            task.cancel()
        for task in (sending, receiving):
            with contextlib.suppress(*ENDED):
                await task
