"""The door's third lane: what a caller typed names a session another node owns.

The peers' rosters are filled directly with :meth:`Peers.frame` (the roster exchange that fills
them in a daemon is its own feature), and the swarm's members are a fake
:class:`~roost.actions.remote.Forwarder`. Pure objects: no sockets, no tmux.
"""

from __future__ import annotations

import asyncio

import pytest

from roost.actions import remote
from roost.actions.remote import Act, Reply
from roost.actions.sessions import OWNED_ELSEWHERE, Door
from roost.base.errors import PEER_UNREACHABLE, Conflict, PeerUnreachable, TargetGone
from tests.actions.swarmdoor import DESK, GONE, HERE, LAPTOP, Members, swarm_door
from tests.roster.helpers import NODE_ID, Clock, key


@pytest.fixture
def door() -> Door:
    return swarm_door(Clock())


def test_an_exact_key_of_a_member_is_that_members_whether_or_not_its_roster_came(door: Door) -> None:
    heard = door.find(f"{LAPTOP}:10:5")
    assert (heard.owner, heard.node, heard.key, heard.pane, heard.headless) == (
        LAPTOP,
        "laptop",
        f"{LAPTOP}:10:5",
        None,
        False,
    )
    assert heard.record is not None and heard.record.name == "builder"
    unheard = door.find(f"{DESK}:999:1")
    assert (unheard.owner, unheard.node, unheard.record) == (DESK, "desk", None)


@pytest.mark.parametrize("typed", [f"{GONE}:30:5", f"{NODE_ID}:1:1", "nobody:1:1"])
def test_a_key_of_no_member_or_of_this_node_that_it_lacks_is_no_session(door: Door, typed: str) -> None:
    with pytest.raises(TargetGone):
        door.find(typed)


def test_a_name_unique_across_the_swarm_is_its_owners(door: Door) -> None:
    found = door.find("builder")
    assert (found.owner, found.node, found.key) == (LAPTOP, "laptop", f"{LAPTOP}:10:5")


def test_a_name_live_on_two_nodes_is_ambiguous_and_lists_each_candidate_with_its_node(door: Door) -> None:
    with pytest.raises(Conflict) as refused:
        door.find("twin")
    assert refused.value.extra["candidates"] == [f"{DESK}:20:5", f"{LAPTOP}:11:5"]
    assert refused.value.extra["nodes"] == [
        {"session_key": f"{DESK}:20:5", "node_id": DESK, "node": "desk"},
        {"session_key": f"{LAPTOP}:11:5", "node_id": LAPTOP, "node": "laptop"},
    ]
    assert f"{DESK}:20:5 on desk" in refused.value.message


def test_a_name_live_here_and_on_a_peer_is_ambiguous_too(door: Door) -> None:
    with pytest.raises(Conflict) as refused:
        door.find("here")
    assert refused.value.extra["candidates"] == [key(HERE), f"{LAPTOP}:12:5"]
    assert [where["node"] for where in refused.value.extra["nodes"]] == ["gibson", "laptop"]


def test_a_pid_names_a_process_on_this_node_only(door: Door) -> None:
    assert door.find("4242").key == key(HERE)
    assert door.find("4242").owner is None


@pytest.mark.parametrize("typed", ["old", "orphan", "nobody"])
def test_an_ended_name_or_one_only_a_former_member_had_is_no_session(door: Door, typed: str) -> None:
    with pytest.raises(TargetGone):
        door.find(typed)


def test_without_a_forwarder_the_door_finds_only_its_own(door: Door) -> None:
    own = Door(door.live, door.clock, peers=door.peers)
    with pytest.raises(TargetGone):
        own.find("builder")
    with pytest.raises(TargetGone):
        own.find(f"{LAPTOP}:10:5")


def test_actions_refuse_a_session_of_another_node_rather_than_act_on_it_here(door: Door) -> None:
    for step in (door.local, door.session, door.pane, door.headless):
        with pytest.raises(Conflict) as refused:
            step("builder")
        assert refused.value.extra == {"code": OWNED_ELSEWHERE, "node": "laptop", "node_id": LAPTOP}


def test_forwarding_needs_a_member_and_refuses_at_once_when_none_answers(door: Door) -> None:
    act = Act(f"{LAPTOP}:10:5", remote.API, "prompt", "{}", "local user", "cli")
    for forwarder, node in ((None, LAPTOP), (door.forwarder, GONE)):
        with pytest.raises(PeerUnreachable) as refused:
            asyncio.run(remote.forward(forwarder, node, act))
        assert refused.value.extra["code"] == PEER_UNREACHABLE
    members = Members()
    with pytest.raises(PeerUnreachable):
        asyncio.run(remote.forward(members, LAPTOP, act))
    assert members.sent == [(LAPTOP, act)]  # tried once, never again
    busy = Reply(409, b'{"error": "busy", "code": "busy"}')
    assert asyncio.run(remote.forward(Members(busy), DESK, act)) == busy


@pytest.mark.parametrize(
    ("typed", "owner"),
    [
        (f"{LAPTOP}:10:5", LAPTOP),
        ("n0de:1:2", "n0de"),
        ("builder", None),
        ("a:b:c", None),
        ("a:1", None),
        (":1:2", None),
        ("a:1:2x", None),
        ("a:١:2", None),
    ],
)
def test_a_key_names_its_owner_by_its_prefix(typed: str, owner: str | None) -> None:
    assert remote.owner_of(typed) == owner


@pytest.mark.parametrize(
    ("body", "seconds"),
    [
        ('{"text": "hi"}', 0.0),
        ('{"text": "hi", "wait": "idle"}', remote.WAIT_DEFAULT_S),
        ('{"text": "hi", "wait": "idle", "timeout_s": 30}', 30.0),
        ('{"prompt": "hi", "wait_until": "idle", "timeout_s": 45}', 45.0),
        ('{"text": "hi", "deadline_ms": 1000060000}', 60.0),
        ('{"text": "hi", "deadline_ms": 10}', 0.0),
        ('{"wait": "idle", "timeout_s": 99999999}', remote.WAIT_LIMIT_S),
        ('{"wait": "idle", "timeout_s": true}', remote.WAIT_DEFAULT_S),
        ("[1, 2", 0.0),
        ("[]", 0.0),
    ],
)
def test_an_act_that_waits_on_purpose_is_given_its_wait(body: str, seconds: float) -> None:
    assert remote.waiting(body, 1_000_000.0) == seconds
