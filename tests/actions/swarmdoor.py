"""A door in a swarm, for the tests of the third lane: peers' rosters filled with
:meth:`Peers.frame` as the roster exchange would, and a fake :class:`Forwarder` for the members
that records every act it is handed."""

from __future__ import annotations

from typing import Any

from roost.actions.remote import Act, Reply
from roost.actions.sessions import Door
from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable
from roost.remote.swarm.peers import Peers
from roost.truth.roster import ProcessId, records
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER
from tests.roster.helpers import NODE, NODE_ID, Clock, claim, roster

LAPTOP, DESK, GONE = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"
HERE = ProcessId(4242, 1000)


class Members:
    """A swarm of this node, ``laptop`` and ``desk``; ``GONE`` was a member and left."""

    def __init__(self, answer: Reply | None = None) -> None:
        self.names = {LAPTOP: "laptop", DESK: "desk"}
        self.sent: list[tuple[str, Act]] = []
        self.answer = answer

    def member(self, node: str) -> str | None:
        found = self.named(node)
        return found[0] if len(found) == 1 and found[0] != NODE_ID else None

    def named(self, node: str) -> list[str]:
        """As a real membership: this node is one of the members a name may name."""
        every = {NODE_ID: NODE, **self.names}
        return [ident for ident, name in every.items() if node in (ident, name)]

    def name(self, node_id: str) -> str:
        return self.names.get(node_id, node_id)

    async def forward(self, node_id: str, act: Act) -> Reply:
        self.sent.append((node_id, act))
        if self.answer is None:
            raise PeerUnreachable(f"{node_id} did not answer", code=PEER_UNREACHABLE)
        return self.answer


def peer_record(node_id: str, node: str, pid: int, **fields: Any) -> dict[str, Any]:
    made = records.Record(node, node_id, f"{node_id}:{pid}:5", pid, 5, 1_700_000_000.0, activity="active")
    return records.to_json(made.replace(**fields))


def frame(node_id: str, node: str, *listed: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": records.SCHEMA,
        "node": node,
        "node_id": node_id,
        "status_epoch": 1,
        "seq": 1,
        "records": list(listed),
    }


def swarm_door(clock: Clock, answer: Reply | None = None) -> Door:
    """This node (``gibson``) with one session named ``here``, in a swarm with ``laptop`` and
    ``desk`` whose rosters are as if their frames had come; ``answer`` is every owner's reply."""
    live = Live(roster(clock), clock)
    named = claim(clock, LAUNCHER, HERE, fields={"name": "here", "lane": "headless"})
    assert live.apply(named).accepted
    peers = Peers(NODE_ID)
    peers.frame(
        LAPTOP,
        frame(
            LAPTOP,
            "laptop",
            peer_record(LAPTOP, "laptop", 10, name="builder"),
            peer_record(LAPTOP, "laptop", 11, name="twin"),
            peer_record(LAPTOP, "laptop", 12, name="here"),
            peer_record(LAPTOP, "laptop", 13, name="old", liveness="ended"),
            peer_record(LAPTOP, "laptop", 4242, name="4242"),
        ),
        clock(),
    )
    peers.frame(DESK, frame(DESK, "desk", peer_record(DESK, "desk", 20, name="twin")), clock())
    peers.frame(GONE, frame(GONE, "gone", peer_record(GONE, "gone", 30, name="orphan")), clock())
    return Door(live, clock, peers=peers, forwarder=Members(answer))
