"""Peers' rosters kept beside this node's: checked at the door, served stale with their age."""

from __future__ import annotations

from typing import Any

import pytest

from roost.base.errors import PeerRefused
from roost.remote.swarm import union
from roost.remote.swarm.peers import KEEP, MAX_RECORDS, Peers
from roost.truth.roster import records
from roost.truth.roster.hub import LINGER

OWN, PEER = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
NOW = 1_796_000_000.0


def record(node_id: str = PEER, pid: int = 10, **fields: Any) -> dict[str, Any]:
    made = records.Record("laptop", node_id, f"{node_id}:{pid}:5", pid, 5, NOW - 60, activity="active")
    return {**records.to_json(made.replace(**fields)), "field_from_a_newer_node": {"kept": "out"}}


def frame(*listed: dict[str, Any], node_id: str = PEER, node: str = "laptop") -> dict[str, Any]:
    return {
        "schema": records.SCHEMA,
        "node": node,
        "node_id": node_id,
        "status_epoch": 1,
        "seq": 3,
        "records": list(listed),
    }


def served(peers: Peers, local: list[records.Record], now: float) -> list[dict[str, Any]]:
    """The union's records, as ``GET /swarm/snapshot`` serves them."""
    return union.document("desk", OWN, local, peers, epoch=1, seq=0, now=now)["records"]


def own() -> records.Record:
    return records.Record("desk", OWN, f"{OWN}:1:1", 1, 1, NOW - 5)


def test_the_union_serves_this_nodes_records_first_then_each_peers_with_its_state_and_age() -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record(pid=10), record(pid=11, name="builder")), NOW)
    listed = served(peers, [own()], NOW + 2.5)
    assert [(r["session_key"], r["peer_state"], r["peer_age_ms"]) for r in listed] == [
        (f"{OWN}:1:1", "local", 0),
        (f"{PEER}:10:5", "reachable", 2500),
        (f"{PEER}:11:5", "reachable", 2500),
    ]
    assert "field_from_a_newer_node" not in listed[1]
    assert listed[2]["name"] == "builder" and listed[2]["node"] == "laptop"


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"name": "evil\x1b]52;c;aGk=\x07"}, "a control sequence in a name"),
        ({"activity": "dancing"}, "a word outside the vocabulary"),
        ({"pid": True}, "a bool for a pid"),
        ({"session_key": "cccccccccccccccc:10:5"}, "a session of another node"),
        ({"node_id": "cccccccccccccccc", "session_key": "cccccccccccccccc:10:5"}, "a record of another node"),
        ({"started_at": "yesterday"}, "a time that is not one"),
        ({"pending": {"x": float("nan")}}, "a value JSON cannot write"),
        ({"liveness": "immortal"}, "an unknown liveness"),
        ({"spend": {"turns": 1, "cost": {"USD": "lots"}}}, "a cost that is not a number"),
        ({"spend": {"turns": 1, "cost": {"USD": -1.5}}}, "a negative cost"),
        ({"spend": {"turns": 1, "cost": {"US\nD": 1.5}}}, "a currency on two lines"),
        ({"spend": {"turns": "1"}}, "a count that is a string"),
        ({"spend": {"cost": {"USD": 1.5}}}, "a spend with no turns"),
        ({"spend": {"turns": 1, "tokens": {"input": 2.5}}}, "a token count that is not whole"),
        ({"budget": {"state": "<img src=x>"}}, "a budget state outside the vocabulary"),
        ({"budget": {"state": "exceeded", "reason": 7}}, "a reason that is not text"),
    ],
)
def test_a_bad_record_is_dropped_and_counted_and_the_rest_of_the_frame_stands(
    bad: dict[str, Any], why: str
) -> None:
    peers = Peers(OWN)
    good = record(pid=10)
    peer = peers.frame(PEER, frame(good, {**record(pid=11), **bad}), NOW)
    assert list(peer.records) == [good["session_key"]], why
    assert peer.dropped == 1


def test_a_peers_spend_and_budget_pass_whole_and_in_their_order() -> None:
    """What the faces read is checked; the rest (``last``, a budget's ``lift``) passes as is."""
    spend = {
        "turns": 2,
        "tokens": {"input": 10, "total": 12},
        "cost": {"USD": 0.5},
        "unpriced": 1,
        "last": {},
    }
    budget = {
        "state": "exceeded",
        "scope": "day",
        "limit": 1.0,
        "currency": "USD",
        "reason": "1 of 1",
        "lift": "x",
    }
    peer = Peers(OWN).frame(PEER, frame(record(pid=10, spend=spend, budget=budget)), NOW)
    [kept] = peer.records.values()
    assert (kept.spend, kept.budget) == (spend, budget)
    assert (list(kept.spend), list(kept.budget)) == (list(spend), list(budget))


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not a frame", "not a rosterd.snapshot.v1 document"),
        ({**frame(), "schema": "rosterd.snapshot.v0"}, "not a rosterd.snapshot.v1 document"),
        (frame(node_id="cccccccccccccccc"), "the frame speaks for another node"),
        ({**frame(), "records": {"a": 1}}, "at most 10000 records"),
        (frame(node="two\nlines"), "the node's name, one line"),
        (frame(*[record(pid=n) for n in range(1, MAX_RECORDS + 2)]), "at most 10000 records"),
    ],
)
def test_a_frame_that_is_not_the_senders_roster_is_refused_and_changes_nothing(
    document: object, message: str
) -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record(pid=10)), NOW)
    with pytest.raises(PeerRefused, match=message) as refused:
        peers.frame(PEER, document, NOW + 1)
    assert refused.value.code == "malformed"
    kept = peers.get(PEER)
    assert kept is not None and list(kept.records) == [f"{PEER}:10:5"] and kept.heard_at == NOW


def test_this_nodes_own_id_is_never_a_peer() -> None:
    with pytest.raises(PeerRefused, match="own roster"):
        Peers(OWN).frame(OWN, frame(record(node_id=OWN), node_id=OWN), NOW)


def test_an_unreachable_peer_is_served_stale_with_its_age_until_its_fresh_frame_replaces_it() -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record(pid=10), record(pid=11)), NOW)
    peers.lost(PEER)
    stale = served(peers, [], NOW + 40)
    assert {(r["peer_state"], r["peer_age_ms"]) for r in stale} == {("unreachable", 40_000)}
    peers.frame(PEER, frame(record(pid=11, activity="idle")), NOW + 41)
    [fresh] = served(peers, [], NOW + 41)
    assert (fresh["session_key"], fresh["activity"], fresh["peer_state"], fresh["peer_age_ms"]) == (
        f"{PEER}:11:5",
        "idle",
        "reachable",
        0,
    )


def test_a_keep_alive_keeps_the_age_small_and_the_peer_reachable() -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record()), NOW)
    peers.lost(PEER)
    peers.heard(PEER, NOW + 10)
    [one] = served(peers, [], NOW + 10.2)
    assert (one["peer_state"], one["peer_age_ms"]) == ("reachable", 200)


def test_a_change_updates_one_record_and_a_late_older_revision_never_wins() -> None:
    peers = Peers(OWN)
    assert peers.change(PEER, record(), NOW) is None  # no frame yet: nothing to change
    peers.frame(PEER, frame(record(revision=4)), NOW)
    newer = peers.change(PEER, record(revision=6, activity="needs_attention"), NOW + 1)
    assert newer is not None and newer.activity == "needs_attention"
    late = peers.change(PEER, record(revision=5, activity="idle"), NOW + 2)
    assert late is not None and late.revision == 6
    assert peers.change(PEER, record(name="\x07"), NOW + 3) is None
    peer = peers.get(PEER)
    assert peer is not None and peer.dropped == 1 and peer.records[f"{PEER}:10:5"].revision == 6


def test_a_request_the_peer_waits_on_keeps_the_identity_its_own_rosterd_gave_it() -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record(revision=4)), NOW)
    asked = {"kind": "permission", "id": "320908547ec8f286", "answerable": True, "tool": "Bash"}
    kept = peers.change(PEER, record(revision=5, activity="needs_attention", pending=asked), NOW + 1)
    assert kept is not None and kept.pending == asked
    peer = peers.get(PEER)
    assert peer is not None and peer.dropped == 0


def test_a_peer_is_dropped_after_a_day_unheard_or_at_once_when_forgotten() -> None:
    peers = Peers(OWN)
    peers.frame(PEER, frame(record()), NOW)
    other = "cccccccccccccccc"
    peers.frame(other, frame(record(node_id=other), node_id=other), NOW)
    assert peers.expire(NOW + KEEP - 1) == []
    peers.heard(other, NOW + 10)
    assert peers.expire(NOW + KEEP) == [PEER]
    assert peers.forget(other) is True
    assert served(peers, [], NOW + KEEP) == [] and peers.forget(PEER) is False


def test_a_peers_ended_session_leaves_the_union_a_linger_after_it_ended_as_its_owner_drops_it() -> None:
    """Its owner drops an ended session from its roster after ``LINGER``, with no word on its
    stream; kept until the next frame, a link that stayed up held every session its peer ever
    ended (the soak's unions grew apart from their owners), and past ``MAX_RECORDS`` of them
    refused the peer's new sessions."""
    peers = Peers(OWN)
    peers.frame(PEER, frame(record(pid=10), record(pid=11), record(pid=12)), NOW)
    ended = {"liveness": "ended", "ended_reason": "exit", "revision": 2}
    peers.change(PEER, record(pid=10, **ended), NOW + 5)
    peers.frame(PEER, frame(record(pid=10, **ended), record(pid=11, **ended), record(pid=12)), NOW + 20)
    assert peers.linger(NOW + 5 + LINGER - 1) == 0
    assert peers.linger(NOW + 5 + LINGER) == 1  # from when it was first heard ended, not the new frame
    assert [r["session_key"] for r in served(peers, [], NOW + 40)] == [f"{PEER}:11:5", f"{PEER}:12:5"]
    assert peers.linger(NOW + 20 + LINGER) == 1
    assert [r["session_key"] for r in served(peers, [], NOW + 60)] == [f"{PEER}:12:5"]


def test_a_name_finds_peers_sessions_an_exact_key_finds_one() -> None:
    peers = Peers(OWN)
    other = "cccccccccccccccc"
    peers.frame(PEER, frame(record(pid=10, name="api"), record(pid=11, name="web")), NOW)
    peers.frame(other, frame(record(node_id=other, pid=12, name="api"), node_id=other, node="server"), NOW)
    assert {r.node_id for r in peers.find("api")} == {PEER, other}
    assert [r.session_key for r in peers.find(f"{other}:12:5")] == [f"{other}:12:5"]
    assert peers.find("nobody") == []


def test_a_peers_pending_request_keeps_the_id_and_answerable_its_owner_gave_it() -> None:
    """A client may not claim a request's id; its owner's roster does, and a peer passes it on:
    without the id nobody could answer a remote session's dialog from this node."""
    asked = {
        "summary": "Bash: git push origin main",
        "tool": "Bash",
        "id": "1a80cb91cb5d5021",
        "answerable": True,
        "options": [{"id": "allow", "name": "Allow", "kind": "allow_once"}],
        "kind": "permission",
        "opened_at": "2026-12-03T15:24:58.893Z",
    }
    peers = Peers(OWN)
    waiting = record(activity="needs_attention", pending=asked)
    assert peers.frame(PEER, frame(waiting), NOW).records[waiting["session_key"]].pending == asked
    later = {**record(activity="needs_attention", pending={**asked, "id": "2b"}), "revision": 9}
    changed = peers.change(PEER, later, NOW)
    assert changed is not None and changed.pending == {**asked, "id": "2b"}


def test_a_peers_session_handed_off_says_where_it_went() -> None:
    peers = Peers(OWN)
    went = {"node": "desk", "node_id": OWN, "session_key": f"{OWN}:7:7"}
    ended = record(liveness="ended", ended_reason="handed_off", handed_to=went)
    peers.frame(PEER, frame(ended), NOW)
    (found,) = served(peers, [], NOW)
    assert (found["ended_reason"], found["handed_to"]) == ("handed_off", went)


def test_a_peers_terminals_are_checked_by_the_fields_a_node_shares() -> None:
    """Every field :func:`roost.actions.terminals.shared` sends is one the receiving check
    reads, and nothing else of a pane is kept."""
    from roost.actions.terminals import SHARED
    from roost.remote.swarm.peers import TERMINAL_LIMITS

    assert ("pane", *(name for name, _, _ in TERMINAL_LIMITS)) == SHARED
    peers = Peers(OWN)
    peers.frame(PEER, frame(record()), NOW)
    pane = {"pane": "%7", "session": "main", "window": "", "name": None, "command": "bash", "cwd": None}
    extra = {**pane, "pane": "%8", "session_key": f"{OWN}:1:1", "state": "working"}
    bad = [
        {**pane, "pane": "%x"},
        {**pane, "window": "a\nb"},
        {**pane, "name": 7},
        {**pane, "cwd": "/" * 4097},
        {k: v for k, v in pane.items() if k != "command"},
    ]
    assert peers.terminals(PEER, {"terminals": [pane, extra, *bad]}, NOW + 1) is True
    kept = peers.get(PEER)
    assert kept is not None and kept.terminals == (pane, {**pane, "pane": "%8"}) and kept.dropped == 5
    assert peers.terminals(PEER, {"terminals": [pane, extra]}, NOW + 2) is False
    with pytest.raises(PeerRefused):
        peers.terminals("c" * 16, {"terminals": []}, NOW)
