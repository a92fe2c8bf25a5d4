"""``swarm.json`` and every change to it, without a network: admitting, joining, revoking,
leaving, and the refusals on either side of a join that change nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from roost.base.errors import Conflict, PeerRefused, TargetGone
from roost.remote.mesh.membership import Membership, NotInSwarm
from roost.remote.swarm import canonical, invites, members, state
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity


def membership(root: Path, name: str, identity: Identity | None = None, address: str = "") -> Membership:
    directory = root / name
    directory.mkdir(mode=0o700, exist_ok=True)
    return Membership(
        directory,
        identity or Identity.generate(name),
        name=name,
        address=address or f"100.64.0.{len(name)}:8791",
        version="t",
        clock=time.time,
    )


def code(call: object, *args: object) -> str | None:
    with pytest.raises(PeerRefused) as refused:
        call(*args)  # type: ignore[operator]
    return refused.value.code


def test_a_join_from_token_to_swarm_json(tmp_path: Path) -> None:
    a, b = membership(tmp_path, "a"), membership(tmp_path, "bb")
    token = a.invite(60).token
    invite = invites.read(token)
    answer = a.admit(token, b.joining_hello(invite.swarm_id))
    to_greet = b.joined(invite, answer)
    assert [m.node_id for m in to_greet] == ["a"]
    assert sorted(b.members) == sorted(a.members) == ["a", "bb"]
    assert b.swarm.swarm_key == a.swarm.swarm_key
    assert a.members["bb"].certificate == b.identity.certificate()  # pinned by every member from now on
    assert state.load(b.directory) is not None
    assert code(a.admit, token, membership(tmp_path, "ccc").joining_hello(invite.swarm_id)) == "used"


def test_a_join_whose_answer_was_lost_may_be_tried_again_with_a_new_invite(tmp_path: Path) -> None:
    """The admitter took the joiner in, and its answer never arrived (a cut, a timeout): the
    same node asks again with a new invite and gets the answer again, its record unchanged and
    the new token burnt. Another key under that node's name, or a revoked node, gets nothing."""
    a, b = membership(tmp_path, "a"), membership(tmp_path, "bb")
    first = a.invite(60).token
    swarm_id = invites.read(first).swarm_id
    a.admit(first, b.joining_hello(swarm_id))  # the answer is lost on the way
    record = a.members["bb"]
    again = a.invite(60).token
    b.joined(invites.read(again), a.admit(again, b.joining_hello(swarm_id)))
    assert sorted(b.members) == ["a", "bb"] and b.swarm.swarm_key == a.swarm.swarm_key
    assert a.members["bb"] == record and a.members["bb"].signed_at == record.signed_at
    assert code(a.admit, again, b.joining_hello(swarm_id)) == "used"
    saved = state.load(a.directory)
    assert saved is not None and saved.burnt == a.swarm.burnt  # the second invite is burnt on disk
    third = a.invite(60).token
    moved = membership(tmp_path, "bb", address="100.64.9.9:8791")  # the same name, another key
    assert code(a.admit, third, moved.joining_hello(swarm_id)) == "wrong_key"
    a.revoke("bb")
    assert code(a.admit, third, b.joining_hello(swarm_id)) == "revoked"


def test_a_refused_join_burns_nothing_and_writes_nothing(tmp_path: Path) -> None:
    a, b = membership(tmp_path, "a"), membership(tmp_path, "bb")
    token = a.invite(60).token
    invite = invites.read(token)
    saved = (a.directory / state.FILE).read_bytes()
    hello = b.joining_hello(invite.swarm_id)
    bare = canonical.sign(
        {k: v for k, v in hello.items() if k not in ("signature", "certificate")}, b.identity
    )
    assert code(a.admit, token, bare) == "malformed"  # no certificate to pin
    assert code(a.admit, token, a.joining_hello(invite.swarm_id)) == "malformed"  # itself
    assert code(a.admit, token, b.joining_hello("0" * 32)) == "other_swarm"
    assert code(a.admit, token + "0", hello) == "malformed"
    assert (a.directory / state.FILE).read_bytes() == saved
    answer = a.admit(token, hello)  # the token still admits, once

    assert code(b.joined, invite, {**answer, "swarm_id": "0" * 32}) == "other_swarm"
    liar = invites.Invite(**{**invite.__dict__, "admitter_public_key": Identity.generate("x").public_key})
    assert code(b.joined, liar, answer) == "wrong_key"
    without = [r for r in answer["members"] if r["node_id"] != "bb"]  # type: ignore[union-attr]
    assert code(b.joined, invite, {**answer, "members": without}) == "malformed"
    raw = bytearray(unb64(answer["sealed_key"]) or b"")
    raw[-1] ^= 1
    assert code(b.joined, invite, {**answer, "sealed_key": b64(bytes(raw))}) == "unsealable"
    assert b.state is None and not (b.directory / state.FILE).exists()


def test_revoke_and_leave(tmp_path: Path) -> None:
    a, b = membership(tmp_path, "a"), membership(tmp_path, "bb")
    token = a.invite(60).token
    b.joined(invites.read(token), a.admit(token, b.joining_hello(invites.read(token).swarm_id)))
    with pytest.raises(Conflict):
        a.revoke("a")
    with pytest.raises(TargetGone):
        a.revoke("nosuch")
    [revoked] = a.revoke("bb")
    assert revoked.revoked_by_other and [m.node_id for m in a.peers()] == []
    assert a.pinned() == {}  # dialled by no one: a revoked node is reached by no dialer
    assert b.identity.certificate() in a.certificates()  # yet taken at the door, to be told so
    assert a.revoke("bb") == []  # final, and once
    farewell = b.leave()
    assert farewell is not None and b.members["bb"].left
    b.forget()
    assert b.state is None and not (b.directory / state.FILE).exists()
    with pytest.raises(NotInSwarm):
        b.leave()
    assert farewell["node_id"] == "bb"


def test_a_renamed_node_keeps_its_id_and_signs_its_new_name(tmp_path: Path) -> None:
    identity = Identity.generate("a")
    first = membership(tmp_path, "a", identity)
    first.invite(60)
    again = Membership(
        first.directory, identity, name="gibson", address="100.64.0.9:8791", version="t", clock=time.time
    )
    own = again.members["a"]
    assert (own.node_id, own.name, own.address) == ("a", "gibson", "100.64.0.9:8791")
    assert state.load(first.directory).members["a"].name == "gibson"  # type: ignore[union-attr]


def joined(tmp_path: Path, a: Membership, name: str) -> Membership:
    """``name`` admitted by ``a``, each knowing the other's set from the join."""
    b = membership(tmp_path, name)
    token = a.invite(60).token
    b.joined(invites.read(token), a.admit(token, b.joining_hello(invites.read(token).swarm_id)))
    return b


def test_a_hello_carries_what_its_recipient_lacks_and_nothing_when_sets_agree(tmp_path: Path) -> None:
    """The records a hello carries follow the set the recipient said it holds: all of them to a
    node never heard from, none once it holds this node's set, the changed ones alone after an
    admission, all again when it says it holds a set this node never held."""
    a = membership(tmp_path, "a")
    b = joined(tmp_path, a, "bb")
    assert len(a.hello("bb")["members"]) == len(members.documents(a.standings))  # never heard from
    b.greeted(a.hello("bb"), "a")  # a greets b: b holds a's set, and its own record a lacks
    a.greeted(b.hello("a"), "bb")  # b answers with that record
    assert a.digest == b.digest
    assert {r["node_id"] for r in b.hello("a")["members"]} == {"bb"}  # b has not heard a took it
    b.greeted(a.hello("bb"), "a")  # the next greeting says so
    assert a.hello("bb")["members"] == [] and b.hello("a")["members"] == []
    assert a.hello("bb")["digest"] == a.digest

    c = joined(tmp_path, a, "ccc")  # a's set moves on; b still holds the old one
    carried = a.hello("bb")["members"]
    assert {r["node_id"] for r in carried} == {"ccc"}  # type: ignore[index]
    b.greeted(a.hello("bb"), "a")
    assert b.digest == a.digest and sorted(b.members) == ["a", "bb", "ccc"]

    unheard = {k: v for k, v in b.hello("a").items() if k != "signature"}
    a.greeted(canonical.sign({**unheard, "digest": "0" * 64}, b.identity), "bb")  # a set a never held
    assert len(a.hello("bb")["members"]) == len(members.documents(a.standings))
    del c


def test_an_older_nodes_hello_says_no_set_and_is_sent_every_record(tmp_path: Path) -> None:
    a = membership(tmp_path, "a")
    b = joined(tmp_path, a, "bb")
    a.greeted(b.hello("a"), "bb")
    assert a.hello("bb")["members"] == []  # the two sets agree
    older = {k: v for k, v in b.hello("a").items() if k not in ("digest", "signature")}
    a.greeted(canonical.sign(older, b.identity), "bb")
    assert len(a.hello("bb")["members"]) == len(members.documents(a.standings))


def test_one_signed_hello_is_sent_to_every_member_that_lacks_the_same_records(tmp_path: Path) -> None:
    """A round greets every member: the hello is signed and encoded once for all that lack the
    same records (and again once it is a second old, or the set moved on), never shared between
    members that lack different ones."""
    now = [time.time()]
    a = membership(tmp_path, "a")
    a.clock = lambda: now[0]
    b, c = joined(tmp_path, a, "bb"), joined(tmp_path, a, "ccc")
    whole = a.hello_text("bb")
    assert a.hello_text("ccc") is whole  # neither heard from: every record, one hello
    assert len(canonical.parse(whole)["members"]) == len(members.documents(a.standings))  # type: ignore[index,arg-type]
    for _ in range(2):  # until each has said it holds what the other's answers brought
        for peer, name in ((b, "bb"), (c, "ccc")):
            peer.greeted(a.hello(name), "a")
            a.greeted(peer.hello("a"), name)
    assert a.agrees("bb") and a.agrees("ccc")
    first = a.hello_text("bb")
    assert a.hello_text("ccc") is first  # both hold a's set: one hello, carrying no record
    assert canonical.parse(first)["members"] == []  # type: ignore[index]

    d = joined(tmp_path, a, "dddd")  # a's set moves on: b and c lack d's record alike
    carried = a.hello_text("bb")
    assert carried is not first and a.hello_text("ccc") is carried
    assert {r["node_id"] for r in canonical.parse(carried)["members"]} == {"dddd"}  # type: ignore[index]
    unheard = {k: v for k, v in c.hello("a").items() if k != "signature"}
    a.greeted(canonical.sign({**unheard, "digest": "0" * 64}, c.identity), "ccc")  # c: a set a never held
    whole = a.hello_text("ccc")
    every = len(members.documents(a.standings))
    assert whole is not carried and len(canonical.parse(whole)["members"]) == every  # type: ignore[index,arg-type]
    assert a.hello_text("bb") is carried

    now[0] += 1.0
    again = a.hello_text("bb")
    assert (
        again is not carried and canonical.parse(again)["signed_at"] > canonical.parse(carried)["signed_at"]
    )  # type: ignore[index,operator]
    assert b.greeted(canonical.parse(again), "a").node_id == "a"  # signed, and b takes it
    del d
