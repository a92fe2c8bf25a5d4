"""The one way this node sends a request to another: signed for that member, over TLS pinned to
that member's certificate alone.

:meth:`Dialer.send` signs ``METHOD path body`` with this node's key and the swarm key, for the
member it is meant for (the signature names it, so no other member takes it), and sends it to
the member's address trusting that member's certificate and no other: a member that took over
another's address, or any node that is not the one meant, fails the handshake before a byte is
sent. A peer that does not answer is :class:`~roost.base.errors.PeerUnreachable` at once: nothing
is queued or retried here. Every byte between nodes goes through this class, so every request
is signed and pinned the same way.

A member's door that refuses this node because it was revoked says so, with the record of the
revocation; the dialer hands it to :meth:`Membership.told`, which believes it only when a member
this node knows signed it.

A join is the exception, since the joiner is no member: :func:`certificate_at` reads the
admitter's certificate, the caller compares its key with the invite's, and :func:`join` sends
the token over a connection pinned to exactly that certificate, with no client certificate.
Discovery is the other (:meth:`Dialer.identify`): it asks who answers at an address, trusting
any member's certificate for the handshake alone, and sends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator

import httpx

from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable
from roost.remote.mesh import tls
from roost.remote.mesh.membership import Membership
from roost.remote.mesh.transport import LIMITS, Transport
from roost.remote.swarm import canonical
from roost.remote.swarm.members import Member

TIMEOUT = 5.0
"""Seconds a peer request may take; a lost peer is found out by this and nothing waits longer."""
CONNECT_S = 3.0
"""Seconds a connection for one act may take to open, TLS included: a tailnet's round trips are
well under a second even relayed, and a peer behind a pulled cable answers no SYN, so this is
what the first act after a silent cut waits at most (before the roster stream has missed its
keep-alives; after that an act to it is refused without dialling)."""
REFUSAL_LIMIT = 1 << 20
"""Bytes of a door's refusal read: a revocation and its signer's records."""
IDLE_S = LIMITS.keepalive_expiry
"""Seconds a member's pooled client may go unused before :meth:`Dialer.prune` closes it: a
connection idle this long is never reused (the pool opens another), and a member's door closes
it a few seconds later anyway, so keeping it only holds its TLS state and the client."""


def _http(context: ssl.SSLContext, timeout: float | httpx.Timeout) -> httpx.AsyncClient:
    """A client to a peer: trusting ``context`` alone, over the mesh's own :class:`Transport`
    (asyncio's sockets and TLS, where httpx's own reads through anyio), with no proxy or
    certificate from the environment."""
    return httpx.AsyncClient(transport=Transport(context), timeout=timeout, trust_env=False)


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise PeerUnreachable(f"{address} is not host:port", code=PEER_UNREACHABLE)
    return host.strip("[]"), int(port)


def _unreachable(address: str, error: BaseException) -> PeerUnreachable:
    """A person's words for why a peer did not answer; the cause's own text where it has one."""
    reason = str(error)
    if "certificate" in reason.lower():
        reason = "the node that answered is not the one this node means to reach (not its certificate)"
    elif isinstance(error, httpx.TimeoutException | TimeoutError):
        reason = "no answer in time"
    elif isinstance(error, httpx.ReadError | httpx.RemoteProtocolError) and not reason:
        reason = "it closed the connection without an answer (it does not take this node's certificate?)"
    reason = reason or type(error).__name__
    return PeerUnreachable(f"{address} did not answer: {reason}", code=PEER_UNREACHABLE, address=address)


class Dialer:
    """Signed requests to members, each over a client that trusts that member alone."""

    def __init__(self, membership: Membership, trust: tls.Trust, timeout: float = TIMEOUT) -> None:
        self.membership = membership
        self.trust = trust
        self.timeout = timeout
        self._clients: dict[str, tuple[str, ssl.SSLContext, httpx.AsyncClient]] = {}
        self._used: dict[str, float] = {}
        """When each pooled client last ended a request (or was made), on the loop's clock."""
        self._busy: dict[str, int] = {}
        """Requests under way on each pooled client: one in use is never pruned."""
        self._generation = -1

    def _context(self, member: Member) -> ssl.SSLContext:
        gone = self.membership.revoked
        if gone is not None:
            raise PeerUnreachable(
                f"this node was revoked from its swarm by {self.membership.name_of(gone.signer)}: "
                "it acts for nobody there; nothing was sent",
                code=PEER_UNREACHABLE,
                address=member.address,
            )
        context = self.trust.client_for(member.node_id)
        if context is None:
            raise PeerUnreachable(
                f"node {member.node_id} is no member of this node's swarm",
                code=PEER_UNREACHABLE,
                address=member.address,
            )
        return context

    async def _client(self, member: Member) -> httpx.AsyncClient:
        """The pooled client for ``member`` as the membership is now: one whose trust changed
        (the member's certificate, or its revocation) or whose address did is closed for a new
        one. A change of anyone else's keeps it, open connections and all: an admission greets
        every member, and over connections already open that costs no handshake a member."""
        if self._generation != self.trust.generation:
            self._generation = self.trust.generation
            await self._forget_untrusted()
        context = self._context(member)
        found = self._clients.get(member.node_id)
        if found is not None and found[:2] == (member.address, context):
            return found[2]
        if found is not None:
            await found[2].aclose()
        client = _http(context, self.timeout)
        self._clients[member.node_id] = (member.address, context, client)
        self._used[member.node_id] = asyncio.get_running_loop().time()
        return client

    async def prune(self, idle_s: float = IDLE_S) -> int:
        """Close every pooled client no request has used for ``idle_s`` seconds; how many. A
        swarm at rest greets each member about once an hour (``rounds.QUIET_MAX``), so a client
        kept between greetings holds a connection the pool would not reuse, its TLS state and
        the client itself, a thousand of them at a thousand members; the next greeting makes
        a new one. Clients in use are kept, whatever their age."""
        now = asyncio.get_running_loop().time()
        idle = [
            node
            for node in self._clients
            if not self._busy.get(node) and now - self._used.get(node, now) >= idle_s
        ]
        for node in idle:
            self._used.pop(node, None)
            await self._clients.pop(node)[2].aclose()
        return len(idle)

    async def _forget_untrusted(self) -> None:
        """Close each client whose trust is no longer the membership's: of a node that is no
        current member (revoked, or forgotten) or whose certificate changed."""
        if self.membership.revoked is not None:
            await self.close()
            return
        stale = [
            node
            for node, (_, context, _) in self._clients.items()
            if self.trust.client_for(node) is not context
        ]
        for node in stale:
            self._used.pop(node, None)
            await self._clients.pop(node)[2].aclose()

    async def send(self, member: Member, method: str, path: str, document: object = None) -> httpx.Response:
        """``method path`` to ``member``, signed for it, with ``document`` as its JSON body (or
        its canonical bytes, made once for many members)."""
        body, headers = self._signed(member, method, path, document)
        node = member.node_id
        self._busy[node] = self._busy.get(node, 0) + 1
        try:
            client = await self._client(member)
            answer = await client.request(
                method, f"https://{member.address}{path}", content=body, headers=headers
            )
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(member.address, error) from None
        finally:
            self._busy[node] -= 1
            if not self._busy[node]:
                del self._busy[node]
            if node in self._clients:
                self._used[node] = asyncio.get_running_loop().time()
        self._heard(answer.status_code, answer.content)
        return answer

    @contextlib.asynccontextmanager
    async def stream(
        self, member: Member, path: str, timeout: httpx.Timeout
    ) -> AsyncIterator[httpx.Response]:
        """A signed ``GET path`` to ``member`` whose answer does not end (a peer's roster stream),
        on a client of its own: a change of membership makes new shared clients, and must not
        cut a stream the exchange ends itself when it should. Any failure to connect or read,
        ``timeout.read`` of silence included, is :class:`PeerUnreachable`."""
        headers = self.membership.sign("GET", path, b"", member.node_id)
        try:
            async with (
                _http(self._context(member), timeout) as client,
                client.stream("GET", f"https://{member.address}{path}", headers=headers) as response,
            ):
                if response.status_code == 401:
                    self._heard(401, await _bounded(response, REFUSAL_LIMIT))
                yield response
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(member.address, error) from None

    async def once(
        self, member: Member, method: str, path: str, document: object, *, read_s: float, limit: int
    ) -> tuple[int, bytes]:
        """One request to ``member`` on a connection of its own, answered within ``read_s``
        seconds of being sent (a connection within :attr:`timeout`): its status and body, at
        most ``limit`` bytes. A pooled connection to a peer whose cable was pulled still looks
        open, and a request on it would wait the whole ``read_s``; a new one finds out in the
        connect."""
        body, headers = self._signed(member, method, path, document)
        timeout = httpx.Timeout(self.timeout, connect=min(CONNECT_S, self.timeout), read=read_s)
        try:
            async with (
                _http(self._context(member), timeout) as client,
                client.stream(
                    method, f"https://{member.address}{path}", content=body, headers=headers
                ) as answer,
            ):
                status, data = answer.status_code, await _bounded(answer, limit)
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(member.address, error) from None
        if data is None:
            too_long = f"{member.address} answered with more than {limit} bytes"
            raise PeerUnreachable(too_long, code=PEER_UNREACHABLE, address=member.address)
        self._heard(status, data)
        return status, data

    async def tell(self, member: Member, path: str, document: object) -> None:
        """Send one signed request to a node this one just revoked (it is no member, so no
        pooled client trusts it): pinned to its certificate, answered or not, once."""
        if member.certificate is None:
            return
        body, headers = self._signed(member, "POST", path, document)
        context = tls.client_context(self.membership.identity, [member.certificate])
        with contextlib.suppress(httpx.TransportError, ssl.SSLError, OSError):
            async with _http(context, self.timeout) as client:
                await client.post(f"https://{member.address}{path}", content=body, headers=headers)

    async def identify(self, address: str) -> Member | None:
        """The current member whose certificate answers at ``address`` (discovery: who is there,
        before anything is sent to it); None when none does or nobody answers."""
        try:
            der = await _presented(address, self.trust.client, self.timeout)
        except (OSError, ssl.SSLError, TimeoutError):
            return None
        found = self.membership.by_certificate(der) if der else None
        return found if found is not None and not found.revoked else None

    def _signed(
        self, member: Member, method: str, path: str, document: object
    ) -> tuple[bytes, dict[str, str]]:
        if isinstance(document, bytes):
            body = document
        else:
            body = b"" if document is None else canonical.encode(document)
        headers = self.membership.sign(method, path, body, member.node_id)
        if body:
            headers["content-type"] = "application/json"
        return body, headers

    def _heard(self, status: int, body: bytes | None) -> None:
        """A 401 that carries this node's revocation: tell the membership (it checks it)."""
        if status != 401 or not body:
            return
        try:
            said = canonical.parse(body)
        except ValueError:
            return
        if isinstance(said, dict) and "revoked" in said:
            self.membership.told(said["revoked"])

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        self._used.clear()
        for _, _, client in clients.values():
            await client.aclose()


async def _bounded(answer: httpx.Response, limit: int) -> bytes | None:
    """An answer's body, None when it is longer than ``limit``."""
    chunks, size = [], 0
    async for chunk in answer.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def certificate_at(address: str, timeout: float = TIMEOUT) -> bytes:
    """The certificate the listener at ``address`` presents (DER), not yet trusted: a joiner
    compares its key with the one its invite names before it sends a byte of the token."""
    try:
        der = await _presented(address, tls.unverified_context(), timeout)
    except (OSError, ssl.SSLError, TimeoutError) as error:
        raise _unreachable(address, error) from None
    if der is None:
        raise PeerUnreachable(f"{address} presented no certificate", code=PEER_UNREACHABLE, address=address)
    return der


async def _presented(address: str, context: ssl.SSLContext, timeout: float) -> bytes | None:
    """The certificate (DER) the listener at ``address`` presents in a handshake made with
    ``context``, None when it presents none; the connection is closed at once. OSError,
    SSLError or TimeoutError when no handshake completes within ``timeout``."""
    host, port = _split(address)
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(host, port, ssl=context, server_hostname=""), timeout
    )
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()
    del reader
    return bytes(der) if der else None


async def join(
    address: str, certificate: bytes, body: dict[str, object], timeout: float = TIMEOUT
) -> httpx.Response:
    """``POST /swarm/join`` to the admitter at ``address``, trusting exactly ``certificate``."""
    context = tls.client_context(None, [certificate])
    async with _http(context, timeout) as client:
        try:
            return await client.post(
                f"https://{address}/swarm/join",
                content=canonical.encode(body),
                headers={"content-type": "application/json"},
            )
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(address, error) from None
