"""Proxied acts without a network: the document an owner reads (every field refused by name),
the route behind the signed door (not_owner, a node still starting, the answer passed back,
the journal told), and the forwarding side (members by id or name, the owner's door's 401 and
an answer that is not roost's refused as unreachable)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from roost.actions.remote import API, MCP, Act, Reply, Through, node_named
from roost.base.errors import PEER_UNREACHABLE, Conflict, PeerUnreachable, TargetGone, UsageError
from roost.remote.mesh import listener
from roost.remote.mesh.acts import ACT, READ_S, Acting, Forwarding, document, read
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import canonical, signing
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.peers import Peers
from roost.truth.roster import records
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER
from tests.mesh.presenting import presenting
from tests.roster.helpers import ROOT, Clock, claim, key, roster

GOOD: dict[str, Any] = {
    "session": "worker",
    "face": "api",
    "verb": "prompt",
    "body": '{"text": "hi"}',
    "by": "local user",
    "via": "cli",
    "wait_ms": 1500,
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"extra": 1}, "act"),
        ({"session": "two\nlines"}, "session"),
        ({"session": "x" * 1025}, "session"),
        ({"session": 5}, "session"),
        ({"face": "web"}, "face"),
        ({"verb": ""}, "verb"),
        ({"verb": "../invite"}, "verb"),
        ({"verb": "x" * 33}, "verb"),
        ({"body": {"text": "hi"}}, "body"),
        ({"by": ""}, "by"),
        ({"by": "a\x1b[2J"}, "by"),
        ({"via": "terminal"}, "via"),
        ({"wait_ms": -1}, "wait_ms"),
        ({"wait_ms": True}, "wait_ms"),
        ({"wait_ms": 24 * 3600 * 1000 + 1}, "wait_ms"),
    ],
)
def test_every_field_of_an_act_is_checked_and_refused_by_name(change: dict[str, Any], field: str) -> None:
    with pytest.raises(UsageError) as refused:
        read({**GOOD, **change})
    assert refused.value.extra["field"] == field


def test_a_good_act_reads_as_sent_and_a_missing_field_or_a_list_is_refused() -> None:
    assert read(GOOD) == Act("worker", API, "prompt", '{"text": "hi"}', "local user", "cli", 1.5)
    assert read({**GOOD, "session": None, "verb": "start"}).session is None
    for bad in ({k: v for k, v in GOOD.items() if k != "by"}, [GOOD]):
        with pytest.raises(UsageError):
            read(bad)


class Owner:
    """A node's acts route behind its signed door, the faces a test gives it, and what the
    journal was told."""

    def __init__(self, tmp_path: Path, faces: dict[str, Any] | None = None) -> None:
        self.me = Identity.generate("me")
        self.membership = Membership(
            tmp_path, self.me, name="me", address="127.0.0.1:8791", version="t", clock=time.time
        )
        self.membership.invite(60)
        clock = Clock()
        self.live = Live(roster(clock), clock)
        assert self.live.apply(claim(clock, LAUNCHER, ROOT, fields={"name": "worker"})).accepted
        self.acted: list[tuple[str, Act, Through, int]] = []
        self.acting = Acting(self.live.roster, lambda *told: self.acted.append(told))
        self.acting.faces.update(faces or {})
        door = listener.app(self.membership, [self.acting.route()], listener.Refusals())
        self.app = presenting(door, self.me.certificate())

    def send(self, act: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        body = canonical.encode(act)
        headers = signing.sign(
            self.me, self.membership.swarm.swarm_key, "POST", ACT, body, to="me", now=time.time()
        )

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)  # type: ignore[arg-type]
            async with httpx.AsyncClient(transport=transport, base_url="https://node") as client:
                return await client.post(ACT, content=body, headers=headers)

        answer = asyncio.run(go())
        return answer.status_code, answer.json()


def test_an_act_is_done_by_its_face_answered_as_it_answered_and_journalled(tmp_path: Path) -> None:
    seen: list[tuple[Act, Through]] = []

    async def face(act: Act, came: Through, _request: Request) -> Reply:
        seen.append((act, came))
        return Reply(409, b'{"error": "busy", "code": "busy"}')

    owner = Owner(tmp_path, {API: face})
    assert owner.send(GOOD) == (409, {"error": "busy", "code": "busy"})
    [(act, came)] = seen
    assert came == Through("me", "me", "local user", "cli")
    assert owner.acted == [(key(), act, came, 409)]
    unknown = owner.send({**GOOD, "session": "nobody"})
    assert unknown[0] == 409 and len(owner.acted) == 1  # nothing of this node's was acted on
    assert owner.send({**GOOD, "verb": "read", "body": ""})[0] == 409
    assert len(owner.acted) == 1  # a read is forwarded, and not journalled


def test_an_act_naming_another_nodes_key_is_refused_and_never_reaches_a_face(tmp_path: Path) -> None:
    async def face(act: Act, came: Through, _request: Request) -> Reply:
        raise AssertionError("a face was reached")

    owner = Owner(tmp_path, {API: face, MCP: face})
    status, said = owner.send({**GOOD, "session": "otherNode:1:2"})
    assert (status, said["code"]) == (409, "not_owner")
    assert owner.acted == []


def test_a_node_whose_faces_are_not_ready_says_so(tmp_path: Path) -> None:
    status, said = Owner(tmp_path).send(GOOD)
    assert (status, said["code"]) == (503, "starting")


def test_a_body_that_is_not_roosts_json_is_a_400(tmp_path: Path) -> None:
    owner = Owner(tmp_path)
    body = b'{"session": 1.5}'
    headers = signing.sign(
        owner.me, owner.membership.swarm.swarm_key, "POST", ACT, body, to="me", now=time.time()
    )

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=owner.app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="https://node") as client:
            return await client.post(ACT, content=body, headers=headers)

    answer = asyncio.run(go())
    assert (answer.status_code, answer.json()["field"]) == (400, "act")


class Dialer:
    def __init__(self, status: int, body: bytes) -> None:
        self.answer = (status, body)
        self.sent: list[tuple[str, str, str, object, float]] = []

    async def once(
        self, member: Any, method: str, path: str, doc: object, *, read_s: float, limit: int
    ) -> tuple[int, bytes]:
        self.sent.append((member.address, method, path, doc, read_s))
        return self.answer


NOW = 1_800_000_000.0


def member(node_id: str, name: str, revoked: bool = False) -> SimpleNamespace:
    return SimpleNamespace(node_id=node_id, name=name, address=f"{name}:8791", revoked=revoked)


def forwarding(status: int = 200, body: bytes = b"{}") -> tuple[Forwarding, Dialer]:
    members = [member("me", "me"), member("a1", "laptop"), member("b2", "desk"), member("c3", "desk")]
    members.append(member("d4", "gone", revoked=True))
    membership = SimpleNamespace(
        identity=SimpleNamespace(node_id="me"), members={found.node_id: found for found in members}
    )
    dialer = Dialer(status, body)
    peers = Peers("me")
    for found in members[1:4]:
        frame = {"schema": records.SCHEMA, "node_id": found.node_id, "node": found.name, "records": []}
        peers.frame(found.node_id, frame, NOW - 2.5)  # its last keep-alive, 2.5 s ago
    return Forwarding(membership, dialer, peers, lambda: NOW), dialer  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("node", "found"),
    [
        ("a1", "a1"),
        ("laptop", "a1"),
        ("me", None),
        ("desk", None),
        ("b2", "b2"),
        ("gone", None),
        ("d4", None),
    ],
)
def test_a_member_is_named_by_its_id_or_its_unique_name_and_never_this_node(
    node: str, found: str | None
) -> None:
    assert forwarding()[0].member(node) == found


def test_a_name_two_members_share_is_named_as_both_and_an_ambiguity_lists_them() -> None:
    forwarder = forwarding()[0]
    assert forwarder.named("desk") == ["b2", "c3"] and forwarder.named("c3") == ["c3"]
    assert forwarder.named("me") == ["me"] and forwarder.named("gone") == []
    assert node_named(forwarder, "me", "me", "laptop") == "a1"
    assert node_named(forwarder, "me", "me", "me") == "me"
    with pytest.raises(Conflict) as shared:
        node_named(forwarder, "me", "me", "desk")
    assert shared.value.message == "2 nodes go by the name 'desk' (b2, c3): name one by its node id"
    assert shared.value.extra == {
        "candidates": ["b2", "c3"],
        "nodes": [{"node_id": "b2", "node": "desk"}, {"node_id": "c3", "node": "desk"}],
    }
    for nobody in ("gone", "nosuch"):
        with pytest.raises(TargetGone) as missing:
            node_named(forwarder, "me", "me", nobody)
        assert missing.value.extra == {"code": "no_such_node"}
    assert node_named(None, "me", "solo", "solo") == "me"
    with pytest.raises(TargetGone):
        node_named(None, "me", "solo", "desk")


def test_an_act_goes_once_with_its_wait_on_top_and_the_answer_comes_back() -> None:
    forwarder, dialer = forwarding(409, b'{"error": "busy"}')
    act = Act("a1:1:2", API, "prompt", "{}", "local user", "cli", 30.0)
    assert asyncio.run(forwarder.forward("a1", act)) == Reply(409, b'{"error": "busy"}')
    assert dialer.sent == [("laptop:8791", "POST", ACT, document(act), READ_S + 30.0)]
    assert document(act)["wait_ms"] == 30_000 and json.loads(canonical.encode(document(act)))


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, b'{"error": "refused"}'),
        (200, b"<html>"),
        (200, b"[1]"),
        (204, b"{}"),
        (302, b"{}"),
        (101, b"{}"),
    ],
)
def test_a_refusing_door_or_an_answer_roost_does_not_send_is_unreachable(status: int, body: bytes) -> None:
    forwarder, _ = forwarding(status, body)
    with pytest.raises(PeerUnreachable) as refused:
        asyncio.run(forwarder.forward("a1", Act("a1:1:2", API, "read", "", "x", "api")))
    assert refused.value.extra["code"] == PEER_UNREACHABLE


def test_an_owner_the_union_shows_unreachable_is_refused_at_once_with_its_age_and_not_dialled() -> None:
    forwarder, dialer = forwarding()
    forwarder.peers.frame(
        "a1", {"schema": records.SCHEMA, "node_id": "a1", "node": "laptop", "records": []}, NOW - 12.5
    )
    forwarder.peers.lost("a1")
    with pytest.raises(PeerUnreachable) as refused:
        asyncio.run(forwarder.forward("a1", Act("a1:1:2", API, "prompt", "{}", "x", "api")))
    assert refused.value.extra == {"code": PEER_UNREACHABLE, "address": "laptop:8791"}
    said = "laptop (laptop:8791) did not answer: unreachable for 12 s, so nothing was sent"
    assert str(refused.value) == said
    assert dialer.sent == []
    forwarder.peers.heard("a1", NOW)
    assert asyncio.run(forwarder.forward("a1", Act("a1:1:2", API, "read", "", "x", "api"))).status == 200
    assert len(dialer.sent) == 1


def test_an_owner_whose_stream_went_silent_past_its_keep_alives_is_not_dialled() -> None:
    """A pulled cable, before the stream's own read timeout has called it: an act for that owner
    is refused at once rather than left to wait out a connect to a host that answers nothing."""
    forwarder, dialer = forwarding()
    forwarder.peers.heard("a1", NOW - 6.5)
    with pytest.raises(PeerUnreachable) as refused:
        asyncio.run(forwarder.forward("a1", Act("a1:1:2", API, "prompt", "{}", "x", "api")))
    assert str(refused.value) == "laptop (laptop:8791) did not answer: silent for 6 s, so nothing was sent"
    with pytest.raises(PeerUnreachable):
        asyncio.run(forwarder.hand("a1", {}))  # a handoff alike
    assert dialer.sent == []


def test_a_revoked_or_unknown_node_is_not_dialled() -> None:
    forwarder, dialer = forwarding()
    for node in ("d4", "zz"):
        with pytest.raises(PeerUnreachable):
            asyncio.run(forwarder.forward(node, Act("x:1:2", API, "read", "", "x", "api")))
    assert dialer.sent == []
