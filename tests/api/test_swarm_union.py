"""The union roster's routes on a daemon in no swarm: this node alone, marked ``local``; its
own changes on ``/swarm/changes`` with ``node`` and ``node_id``; the cursor replays or starts
over; a bad cursor is refused."""

from __future__ import annotations

import subprocess

from tests.api.helpers import about
from tests.api.sse import Events
from tests.daemon.fixture import Daemon


def test_the_union_of_a_node_alone_is_its_own_roster_marked_local(
    running: Daemon, proc: subprocess.Popen[bytes]
) -> None:
    with running.unix() as client:
        key = client.post("/claim", json=about(proc, activity="working")).json()["session_key"]
        # The union holds this node's records as its feed has numbered them, a change behind
        # the roster at most: the claim is in it once the feed has read it.
        union = running.wait_for(
            lambda: (
                (found := client.get("/swarm/snapshot").json())
                and any(r["session_key"] == key for r in found["records"])
                and found
            ),
            what="the claim in the union",
        )
    status = running.get("/status")
    assert union["schema"] == "rosterd.swarm.v1"
    assert union["nodes"] == [
        {
            "node": status["node"],
            "node_id": status["node_id"],
            "peer_state": "local",
            "peer_age_ms": 0,
            "sessions": len(union["records"]),
            "dropped": 0,
            "terminals": union["nodes"][0]["terminals"],  # its terminal list: tests/mesh/test_nodes_union.py
        }
    ]
    (mine,) = [r for r in union["records"] if r["session_key"] == key]
    assert (mine["node_id"], mine["peer_state"], mine["peer_age_ms"]) == (status["node_id"], "local", 0)


def test_swarm_changes_carry_the_node_and_replay_from_their_own_cursor(
    running: Daemon, proc: subprocess.Popen[bytes]
) -> None:
    with Events(running.unix(), "/swarm/changes") as stream, running.unix() as client:
        opening = stream.until("snapshot")
        assert opening.data["snapshot"]["schema"] == "rosterd.swarm.v1"
        key = client.post("/claim", json=about(proc, activity="working")).json()["session_key"]
        started = stream.until("session_started", key=key)
    assert started.data["node_id"] == running.get("/status")["node_id"]
    assert started.data["record"]["peer_state"] == "local"
    epoch, seq = started.id.split(":")
    with Events(running.unix(), f"/swarm/changes?since={epoch}:{int(seq) - 1}") as replay:
        assert replay.next().id == started.id
    with Events(running.unix(), f"/swarm/changes?since={int(epoch) + 1}:{seq}") as other:
        assert other.next().name == "snapshot"  # another run's or node's cursor: start over


def test_a_cursor_that_is_not_one_is_refused(running: Daemon) -> None:
    with running.unix() as client:
        for bad in ("x", "1:2:3", "9" * 40, "-1"):
            answer = client.get("/swarm/changes", params={"since": bad})
            assert answer.status_code == 400, bad
            assert bad not in answer.json()["error"]
