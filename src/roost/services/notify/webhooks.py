"""The daemon's webhooks: every matching change anywhere in the swarm, POSTed to each receiver, in
order, never waited for.

A client that would rather be called than hold ``GET /swarm/changes`` open registers a webhook;
each change of a kind it named, on this node or any other of its swarm, then arrives as one
``POST`` of ``{"event": NAME, "data": CHANGE}``, ``CHANGE`` being exactly that stream's frame for
it (its ``seq`` and ``status_epoch`` included, ``node`` and ``node_id`` naming where it
happened), with ``X-Rosterd-Event: NAME`` and the webhook's token as a bearer. So the
specification's catch-up recipe holds as written: a receiver that missed deliveries asks
``GET /swarm/changes?since=SEQ`` (or ``EPOCH:SEQ``, the SSE id) with the last ``seq`` it saw, and
gets exactly the changes after it from the same numbering (or a snapshot, when this node can no
longer give them, never a guess). A node in no swarm has only its own changes in that stream.

The roster never waits for a receiver. The service follows the swarm's feed like any stream
(one subscription of the daemon's own, :class:`roost.remote.swarm.feed.Feed`); the follower only sorts
each change into the bounded queue of every webhook that wants it, and each webhook has a task of
its own that empties its queue one delivery at a time, which is what keeps one receiver's
deliveries in order. A delivery has :data:`TIMEOUT` seconds in all; one that fails (refused,
timed out, not 2xx, a redirect: none is followed) is dropped, not retried, and so is a change
that finds its webhook's queue full. Both are logged by the webhook's id, the change's name and
seq, never the token or the body (the daemon holds each kind of line to one a minute); the
receiver catches up with ``GET /swarm/changes?since=SEQ``.

Importing httpx and making its client (its certificate store, the async backend its first
connection loads) costs the process about 0.2 s of CPU, which stalls the event loop even from
another thread (they share the interpreter). A daemon with no webhooks never pays it; one that
has some at start pays it before it serves anyone, and the first registration pays it while it
is being answered, never a delivery. The client ignores proxy settings from the environment: a
proxy would carry the request to where the URL rule (:mod:`roost.services.notify.destinations`) never
looked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from roost import __version__
from roost.base.errors import Unavailable, UsageError
from roost.services.notify import destinations, registrations
from roost.services.notify.destinations import Resolver
from roost.services.notify.registrations import Registrations, Webhook
from roost.truth.roster.changes import SNAPSHOT, SWARM_EVENTS

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("rosterd.webhooks")

QUEUE = 128
"""Deliveries one webhook may have waiting; past that a change for it is dropped, not queued."""
TIMEOUT = 5.0
"""Seconds one delivery may take in all: resolving, connecting, sending and the answer's status."""
KEEPALIVE = 2.0
"""Seconds an idle connection to a receiver is kept for the next delivery: under the 5 s after
which common servers close theirs, so a reused connection is rarely one the receiver just shut."""
FOLLOW_TIMEOUT = 60.0
"""Seconds the follower sleeps on a quiet roster before looking again (any change wakes it)."""
USER_AGENT = f"rosterd/{__version__}"


class Event(Protocol):
    """A change as a feed numbers it: the roster's own, or the swarm's."""

    @property
    def event(self) -> str: ...

    @property
    def seq(self) -> int: ...

    def to_json(self) -> dict[str, Any]: ...


class Following(Protocol):
    """A subscription to a feed: its changes in batches, None once it ends."""

    async def next(self, timeout: float) -> tuple[Any, ...] | None: ...

    def __exit__(self, *_: object) -> None: ...


@dataclass(frozen=True)
class Delivery:
    """One change, encoded once for every webhook that wants it."""

    event: str
    seq: int
    body: bytes


def delivery(change: Event) -> Delivery:
    doc = {"event": change.event, "data": change.to_json()}
    return Delivery(change.event, change.seq, json.dumps(doc, separators=(",", ":")).encode())


@dataclass
class Counts:
    """What became of a webhook's deliveries since the daemon started."""

    sent: int = 0
    failed: int = 0
    dropped: int = 0


@dataclass
class Lane:
    """One webhook: its queue and the task that empties it."""

    hook: Webhook
    queue: asyncio.Queue[Delivery]
    task: asyncio.Task[None] | None = None
    counts: Counts = field(default_factory=Counts)

    def offer(self, item: Delivery) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.counts.dropped += 1
            log.warning(
                f"webhook {self.hook.id}: its queue of %d deliveries is full (the receiver is slow); "
                "%s (seq %d) dropped",
                self.queue.maxsize,
                item.event,
                item.seq,
            )

    def public(self) -> dict[str, Any]:
        counts = self.counts
        deliveries = {
            "sent": counts.sent,
            "failed": counts.failed,
            "dropped": counts.dropped,
            "queued": self.queue.qsize(),
        }
        return {**self.hook.public(), "deliveries": deliveries}


class Webhooks:
    """Use as ``async with``: following starts on entry; on exit every delivery stops."""

    def __init__(
        self,
        follow: Callable[[], Following],
        store: Registrations,
        *,
        queue: int = QUEUE,
        timeout: float = TIMEOUT,
        resolver: Resolver = destinations.resolve,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.follow = follow
        """A new subscription to the feed, from its head on (no replay, no snapshot first)."""
        self.store = store
        self.queue = queue
        self.timeout = timeout
        self.resolver = resolver
        self.clock = clock
        self._stream: Following | None = None
        self._follower: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = _client(timeout) if store.all() else None
        self._making = asyncio.Lock()
        self._running = self._closed = False
        self._lanes: dict[str, Lane] = {}
        for hook in store.all():
            self._open(hook)

    async def __aenter__(self) -> Webhooks:
        self._running = True
        for lane in self._lanes.values():
            lane.task = asyncio.create_task(self._drain(lane))
        self._stream = self.follow()
        self._follower = asyncio.create_task(self._follow(self._stream))
        return self

    async def __aexit__(self, *_: object) -> None:
        self._closed = True
        if self._stream is not None:
            self._stream.__exit__()
        tasks = [self._follower, *(lane.task for lane in self._lanes.values())]
        for task in tasks:
            if task is not None:
                task.cancel()
        for task in tasks:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._client is not None:
            await self._client.aclose()

    def listing(self) -> list[dict[str, Any]]:
        """Every webhook as the API shows it (no token), oldest first."""
        return [self._lanes[hook.id].public() for hook in self.store.all()]

    async def add(self, url: str, events: Iterable[str], token: str) -> dict[str, Any]:
        """Register a webhook and start delivering to it; :class:`UsageError` (400) for a URL the
        rule refuses (a name is resolved now), ``TooMany`` (429) past the bound."""
        if self._closed:
            raise Unavailable("the daemon is stopping")
        destination = destinations.parse(url)
        try:
            async with asyncio.timeout(self.timeout):
                await destinations.addresses(destination, self.resolver)
        except TimeoutError:
            raise destinations.refused(
                f"names the host {destination.host}, which did not resolve in time"
            ) from None
        hook = registrations.new(destination, tuple(events), token, self.clock())
        await self._http()
        self.store.add(hook)
        return self._open(hook).public()

    async def remove(self, ident: str) -> None:
        """Delete webhook ``ident``, dropping what it had queued; ``TargetGone`` (404) for none."""
        self.store.remove(ident)
        lane = self._lanes.pop(ident, None)
        if lane is not None and lane.task is not None:
            lane.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lane.task

    def _open(self, hook: Webhook) -> Lane:
        """The webhook's lane; its deliveries start now, or on entry when not yet running."""
        lane = Lane(hook, asyncio.Queue(self.queue))
        if self._running:
            lane.task = asyncio.create_task(self._drain(lane))
        self._lanes[hook.id] = lane
        return lane

    async def _follow(self, stream: Following) -> None:
        while (batch := await stream.next(FOLLOW_TIMEOUT)) is not None:
            for change in batch:
                self.fan_out(change)

    def fan_out(self, change: Event) -> None:
        """Queue ``change`` for every webhook that wants it; encoded once, only if one does. A
        snapshot (what a subscriber too far behind is sent) and a node's terminal list are no
        session's or node's change to deliver."""
        if change.event == SNAPSHOT or change.event not in SWARM_EVENTS:
            return
        item: Delivery | None = None
        for lane in self._lanes.values():
            if lane.hook.wants(change.event):
                item = item or delivery(change)
                lane.offer(item)

    async def _drain(self, lane: Lane) -> None:
        while True:
            item = await lane.queue.get()
            await self._deliver(lane, item)

    async def _deliver(self, lane: Lane, item: Delivery) -> None:
        """One delivery; a failure is counted and logged (never the token or the body), not raised."""
        why: str
        try:
            async with asyncio.timeout(self.timeout):
                status = await self._post(lane.hook, item)
        except TimeoutError:
            why = f"no answer within {self.timeout:g} s"
        except UsageError as refused:
            why = refused.message
        except Exception as error:
            why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        else:
            if 200 <= status < 300:
                lane.counts.sent += 1
                return
            why = f"the receiver answered {status}"
        lane.counts.failed += 1
        log.warning(
            f"webhook {lane.hook.id}: %s (seq %d) was not delivered: %s; dropped (the receiver "
            "catches up with GET /swarm/changes?since=)",
            item.event,
            item.seq,
            why[:300],
        )

    async def _post(self, hook: Webhook, item: Delivery) -> int:
        """POST ``item`` to the first address of the webhook's host that takes a connection;
        the answer's status (its body is never read)."""
        import httpx

        client = await self._http()
        destination = hook.destination
        addresses = await destinations.addresses(destination, self.resolver)
        headers = {
            "Host": destination.authority,
            "Content-Type": "application/json",
            "Authorization": f"Bearer {hook.token}",
            "X-Rosterd-Event": item.event,
            "User-Agent": USER_AGENT,
        }
        extensions = {"sni_hostname": destination.host} if destination.named else {}
        for address in addresses[:-1]:  # the next address only when this one took no connection
            with contextlib.suppress(httpx.ConnectError):
                return await _send(client, destination.at(address), item.body, headers, extensions)
        return await _send(client, destination.at(addresses[-1]), item.body, headers, extensions)

    async def _http(self) -> httpx.AsyncClient:
        async with self._making:
            if self._client is None:
                self._client = await asyncio.to_thread(_client, self.timeout)
            return self._client


async def _send(
    client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], extensions: dict[str, Any]
) -> int:
    async with client.stream("POST", url, content=body, headers=headers, extensions=extensions) as response:
        return response.status_code


def _client(timeout: float) -> httpx.AsyncClient:
    """The client, with what its first connection would otherwise import on the event loop
    (its async backend): see the module's docstring for when this runs."""
    import httpx

    with contextlib.suppress(ImportError):  # private names: a later version may move them
        import anyio._backends._asyncio  # noqa: F401
        import httpcore._backends.anyio  # noqa: F401

    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        trust_env=False,
        limits=httpx.Limits(max_connections=registrations.MOST * 2, keepalive_expiry=KEEPALIVE),
    )
