"""The swarm's change stream as this node serves it: its own changes and its peers', one
numbered sequence.

A peer's changes are not taken on its word: :mod:`roost.remote.mesh.exchange` keeps each peer's
records in :class:`~roost.remote.swarm.peers.Peers` (checked there) and names what changed by
comparing the record it kept with the one that replaced it (:func:`changes_between`, the
same rule the roster names its own changes by). This node's own changes pass through as its
roster named them. Three more events say how a node stands:

- ``node``: a peer was heard from for the first time, came back, or went quiet
  (``peer_state`` says which, ``peer_age_ms`` how long since its last word);
- ``node_left``: a peer's records are gone from the union (``reason``: ``revoked``, ``left``
  or ``expired``);
- ``terminals``: a node's terminal list changed (``terminals``: every pane of its tmux server,
  as its row in the union now says; see :mod:`roost.remote.swarm.peers`).

Every change carries ``node`` and ``node_id``, and a record carries ``peer_state`` and
``peer_age_ms`` as ``GET /swarm/snapshot`` serves it.

**The cursor.** The sequence is this node's own: ``seq`` counts up from 1 within one *feed
epoch* (the daemon's start, in Unix milliseconds, one past the roster's own status epoch so a
``/changes`` cursor is never taken for one of these), so a change's SSE id is ``EPOCH:SEQ``.
Peers' own sequence numbers are not used, because a change of theirs reaches each node at a
different moment and one cursor per node would make a client merge the order itself; the
cost is that a cursor means something only to the node that gave it: another node's cursor,
or one older than the ring holds, is answered with a ``snapshot`` (the whole union) to start
over from, never with a guess.

**Whole frames.** ``GET /swarm/events`` is one whole union per change (:meth:`Feed.frames`):
the union is taken as it stands right after each change (a :class:`~roost.remote.swarm.union.View`,
a pointer per record) and written out when the client reads it, so a burst of changes is as
many frames, each saying what that change left, however fast they came. A client that falls
:data:`FRAMES` behind has the ones it missed dropped and is sent the union as it is then; the
frame's id says how many it missed (its ``SEQ`` jumps by as many), and memory stays bounded by
what a few hundred views hold, whatever the client does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from roost.remote.swarm.union import Texts, View, Whole
from roost.truth.roster import changes as roster_changes
from roost.truth.roster.backlog import Backlog
from roost.truth.roster.records import Record
from roost.truth.roster.times import to_wire

SNAPSHOT = roster_changes.SNAPSHOT
NODE = roster_changes.NODE
NODE_LEFT = roster_changes.NODE_LEFT
TERMINALS = "terminals"
"""A node's terminal list changed: for pages and ``/swarm/changes``, never a webhook's."""
EVENTS = (*roster_changes.SWARM_EVENTS, TERMINALS)
REASONS = ("revoked", "left", "expired")
"""Why a node's records left the union."""
RING_SIZE = 4096
"""Changes kept for ``?since=``: a swarm's nodes share one ring, so it is larger than a node's."""
BACKLOG = 4096
"""Changes a slow subscriber may fall behind by; past that it is sent one fresh snapshot."""
FRAMES = 256
"""Whole unions a slow ``/swarm/events`` client may fall behind by; past that it is sent the
union as it is then. Fewer than :data:`BACKLOG`: a view holds a pointer per record of the whole
swarm (5000 records: ~40 KiB), where a change holds one record."""


@dataclass(frozen=True)
class SwarmChange:
    """One entry of the swarm's stream; ``detail`` holds a ``node`` or ``node_left`` event's
    fields, ``snapshot`` a snapshot's whole union."""

    seq: int
    event: str
    at: float
    epoch: int
    node_id: str
    node: str
    record: Mapping[str, Any] | None = None
    detail: Mapping[str, Any] | None = None
    snapshot: Mapping[str, Any] | None = None

    @property
    def ident(self) -> str:
        """The SSE id: the cursor a client hands back as ``since`` or ``Last-Event-ID``."""
        return f"{self.epoch}:{self.seq}"

    def to_json(self) -> dict[str, Any]:
        doc = self.head()
        if self.snapshot is not None:
            doc["snapshot"] = dict(self.snapshot)
        return doc

    def head(self) -> dict[str, Any]:
        """:meth:`to_json` without the snapshot's union."""
        doc: dict[str, Any] = {
            "seq": self.seq,
            "event": self.event,
            "at": to_wire(self.at),
            "status_epoch": self.epoch,
            "node": self.node,
            "node_id": self.node_id,
        }
        if self.record is not None:
            doc["session_key"] = self.record.get("session_key")
            doc["record"] = dict(self.record)
        if self.detail is not None:
            doc.update(self.detail)
        return doc


def changes_between(old: Mapping[str, Record], new: Mapping[str, Record]) -> list[tuple[str, Record]]:
    """What happened between two of a peer's frames (or a kept record and its change): each
    record's change names by the roster's own rule, in the new frame's order."""
    found = []
    for key, record in new.items():
        for name in roster_changes.transitions(old.get(key), record):
            found.append((name, record))
    return found


class Subscription(Backlog[SwarmChange]):
    """One client's queue; one that falls :data:`BACKLOG` behind gets a snapshot instead."""

    def __init__(self, feed: Feed, backlog: int) -> None:
        super().__init__(backlog)
        self._feed = feed

    def catch_up(self) -> tuple[SwarmChange, ...]:
        return (self._feed.snapshot_change(),)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_: object) -> None:
        self._feed.unsubscribe(self)


@dataclass(frozen=True)
class Frame:
    """The whole union right after change ``seq`` (of node ``node_id``: ``?node=`` keeps only
    a node's own), for ``GET /swarm/events``."""

    seq: int
    node_id: str
    view: View

    def document(self, epoch: int, only: str | None = None) -> dict[str, Any]:
        return self.view.document(epoch, self.seq, only)

    def text(self, epoch: int, texts: Texts) -> str:
        """:meth:`document` as JSON text (see :meth:`View.text`)."""
        return self.view.text(epoch, self.seq, texts)


class Frames(Backlog[Frame]):
    """One ``/swarm/events`` client's queue; one that falls :data:`FRAMES` behind is sent the
    union as it is then instead of the frames it missed."""

    def __init__(self, feed: Feed, backlog: int) -> None:
        super().__init__(backlog)
        self._feed = feed

    def catch_up(self) -> tuple[Frame, ...]:
        return (self._feed.frame(),)

    def __enter__(self) -> Frames:
        return self

    def __exit__(self, *_: object) -> None:
        self._feed.unsubscribe(self)


class Feed:
    """Numbers the swarm's changes, keeps the newest for replay, and hands them to subscribers."""

    def __init__(
        self,
        own_id: str,
        own_name: str,
        view: Callable[[], View],
        clock: Callable[[], float],
        *,
        ring: int = RING_SIZE,
        backlog: int = BACKLOG,
        frames: int = FRAMES,
        epoch: int | None = None,
    ) -> None:
        self.own_id, self.own_name = own_id, own_name
        self._view = view
        self._clock = clock
        self.epoch = int(clock() * 1000) if epoch is None else epoch
        self._ring: deque[SwarmChange] = deque(maxlen=ring)
        self._backlog = backlog
        self._frames_backlog = frames
        self._subscribers: set[Subscription] = set()
        self._framers: set[Frames] = set()
        self._texts = Texts()
        self.head = 0

    @property
    def subscribers(self) -> int:
        return len(self._subscribers) + len(self._framers)

    def snapshot(self, only: str | None = None) -> dict[str, Any]:
        """The whole union now, stamped with this feed's epoch and head (``GET /swarm/snapshot``);
        with ``only`` (a node id), that node's row and records alone."""
        return self._view().document(self.epoch, self.head, only)

    def nodes(self) -> list[dict[str, Any]]:
        """The union's ``nodes`` now, without its records."""
        return self._view().nodes()

    @property
    def texts(self) -> Texts:
        """Each peer record's JSON text, made once per record (see :class:`Texts`)."""
        return self._texts

    def snapshot_text(self) -> str:
        """:meth:`snapshot` as JSON text, each peer record's text made once per revision."""
        return self._view().text(self.epoch, self.head, self._texts)

    def frame(self) -> Frame:
        """The whole union now, as the frame of the newest change."""
        return Frame(self.head, self.own_id, self._view())

    def snapshot_change(self) -> SwarmChange:
        at, whole = self._clock(), Whole(self._view(), self.epoch, self.head, self._texts)
        return SwarmChange(self.head, SNAPSHOT, at, self.epoch, self.own_id, self.own_name, snapshot=whole)

    def append(
        self,
        event: str,
        node_id: str,
        node: str,
        *,
        record: Mapping[str, Any] | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> SwarmChange:
        """Number one change, keep it, and hand it to every subscriber."""
        self.head += 1
        change = SwarmChange(self.head, event, self._clock(), self.epoch, node_id, node, record, detail)
        self._ring.append(change)
        for subscriber in self._subscribers:
            subscriber.push((change,))
        if self._framers:
            whole = (Frame(self.head, node_id, self._view()),)
            for framer in self._framers:
                framer.push(whole)
        return change

    def since(self, seq: int | None, epoch: int | None) -> tuple[SwarmChange, ...] | None:
        """Every change after ``seq`` of ``epoch``, or None when they cannot all be given."""
        if seq is None or epoch not in (None, self.epoch) or seq > self.head:
            return None
        oldest = self._ring[0].seq if self._ring else self.head + 1
        if seq < oldest - 1:
            return None
        return tuple(change for change in self._ring if change.seq > seq)

    def subscribe(self, seq: int | None = None, epoch: int | None = None) -> Subscription:
        """A subscription holding first the replay after ``seq`` (or a snapshot when that
        cannot be given), then every change as it is appended."""
        subscription = Subscription(self, self._backlog)
        replay = self.since(seq, epoch)
        subscription.push(replay if replay is not None else (self.snapshot_change(),))
        self._subscribers.add(subscription)
        return subscription

    def frames(self) -> Frames:
        """A ``/swarm/events`` client's queue: the union now, then one after every change."""
        framer = Frames(self, self._frames_backlog)
        framer.push((self.frame(),))
        self._framers.add(framer)
        return framer

    def unsubscribe(self, subscription: Subscription | Frames) -> None:
        if isinstance(subscription, Frames):
            self._framers.discard(subscription)
        else:
            self._subscribers.discard(subscription)

    def close(self) -> None:
        for subscriber in [*self._subscribers, *self._framers]:
            subscriber.close()
        self._subscribers.clear()
        self._framers.clear()
