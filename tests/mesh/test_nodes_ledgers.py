"""Every node's journal and usage in one answer, between real daemons in namespaces:
``GET /swarm/journal``, ``GET /swarm/usage`` and ``rosterd journal|usage --swarm``; a node
behind a pulled cable is listed as missing, at once, and the verbs exit 3."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from roost.faces.api import answers
from roost.truth.roster.times import to_wire
from tests.mesh.swarmnodes import Peer, SwarmNode
from tests.mesh.unionnodes import session, snapshot, standing, swarm
from tests.nodes import Network

WITHIN = 15.0
ASKED_WITHIN = 8.0
"""Seconds a union may take when a member's link went down unnoticed: the dialer's 5 s connect
bound, and room for a loaded machine."""


def turn(node: SwarmNode, key: str, harness: str, tokens: int, cost: float) -> None:
    """One ended turn in ``node``'s usage ledger, as the ledger writes it."""
    ledger = node.root / "state" / "roost" / "ledger"
    ledger.mkdir(parents=True, exist_ok=True)
    line = {
        "at": to_wire(time.time()),
        "session_key": key,
        "harness": harness,
        "model": "m1",
        "tokens": {"input": tokens, "output": 1, "total": tokens + 1},
        "cost": {"amount": cost, "currency": "USD"},
    }
    with (ledger / "usage.jsonl").open("a") as out:
        out.write(json.dumps(line) + "\n")


def starts(document: dict[str, Any]) -> dict[str, str]:
    return {e["session_key"]: e["node"] for e in document["entries"] if e["kind"] == "start"}


def test_the_swarm_journal_and_usage_hold_every_nodes_lines_with_their_node(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    key_a, key_b = session(a), session(b)
    b.wait_for(lambda: len(snapshot(b)["nodes"]) == 2, "b hears a")
    union = b.wait_for(
        lambda: (doc := b.get("/swarm/journal").json()) and len(starts(doc)) == 2 and doc, "both starts"
    )
    assert starts(union) == {key_a: "n1", key_b: "n2"}
    assert [(n["node"], n["peer_state"], n["answered"], n["error"]) for n in union["nodes"]] == [
        ("n2", "local", True, None),
        ("n1", "reachable", True, None),
    ]
    assert {e["node_id"] for e in union["entries"]} == {a.identity().node_id, b.identity().node_id}
    stamps = [e["at"] for e in union["entries"]]
    assert stamps == sorted(stamps)

    turn(a, key_a, "fake", 100, 0.5)
    turn(a, key_a, "fake", 10, 0.25)
    turn(b, key_b, "fake", 7, 1.0)
    usage = b.get("/swarm/usage").json()
    rows = {(r["node"], r["harness"]): (r["turns"], r["tokens"]["input"], r["cost"]) for r in usage["rows"]}
    assert rows == {("n1", "fake"): (2, 110, {"USD": 0.75}), ("n2", "fake"): (1, 7, {"USD": 1.0})}
    assert usage["total"]["turns"] == 3 and usage["total"]["tokens"]["input"] == 117
    assert usage["total"]["cost"] == {"USD": 1.75} and usage["total"]["sessions"] == 2
    assert [(n["node"], n["total"]["turns"]) for n in usage["nodes"]] == [("n2", 1), ("n1", 2)]
    answers.SwarmJournal.model_validate(union)  # the answers are what /openapi.json says they are
    answers.SwarmUsage.model_validate(usage)

    # ?since= is fixed on the asking node and sent as one moment: a future one holds nothing anywhere
    later = b.get("/swarm/usage?since=2099-01-01T00:00:00Z").json()
    assert later["rows"] == [] and later["total"]["turns"] == 0 and all(n["answered"] for n in later["nodes"])
    assert b.get("/swarm/journal?since=soon", check=False).status_code == 400

    table = b.ok("usage", "--swarm").splitlines()
    assert table[0].split() == ["n2", "heard"] and table[1].split() == ["n1", "heard"]
    assert table[3].split()[:3] == ["NODE", "HARNESS", "MODEL"]
    assert any(line.split()[:2] == ["n1", "fake"] for line in table)
    lines = b.ok("journal", "--swarm").splitlines()
    assert any(line.split()[0] == "n1" and "start" in line.split() for line in lines[3:])
    assert json.loads(b.ok("usage", "--swarm", "--json"))["total"]["turns"] == 3


@pytest.mark.alone  # bounds on time
def test_a_node_behind_a_pulled_cable_is_listed_missing_at_once_and_the_verbs_exit_3(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    session(a)
    b.wait_for(lambda: len(snapshot(b)["nodes"]) == 2, "b hears a")
    a.node.partition()
    began = time.monotonic()  # before b's link notices: the one ask waits at most the dialer's bound
    asked = b.get("/swarm/usage").json()
    assert time.monotonic() - began < ASKED_WITHIN
    (lost,) = [n for n in asked["nodes"] if n["node"] == "n1"]
    assert lost["answered"] is False and lost["total"] is None and lost["error"]
    b.wait_for(lambda: (standing(b, "n1") or {}).get("peer_state") == "unreachable", "a is lost", WITHIN)
    began = time.monotonic()  # once the link is down, a is not even asked
    journal = b.get("/swarm/journal").json()
    assert time.monotonic() - began < 1.0
    (lost,) = [n for n in journal["nodes"] if n["node"] == "n1"]
    assert (lost["peer_state"], lost["answered"]) == ("unreachable", False)
    assert all(e["node"] == "n2" for e in journal["entries"])
    for verb in ("usage", "journal"):
        done = b.rosterd(verb, "--swarm")
        assert done.returncode == 3, (done.stdout, done.stderr)
        assert "no ledger from n1" in done.stderr and "n1  missing:" in done.stdout
        printed = b.rosterd(verb, "--swarm", "--json")
        assert printed.returncode == 3 and json.loads(printed.stdout)["nodes"][1]["answered"] is False
    a.node.heal()


def test_a_member_reads_a_ledger_only_when_signed_and_a_stranger_learns_nothing(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    trusted = [a.identity().certificate(), b.identity().certificate()]
    member = Peer(b.identity(), b.swarm_key(), trusted)
    target = "/swarm/ledger/usage"
    a_id = a.identity().node_id
    headers = member.headers("GET", target, b"", to=a_id)
    answer = member.send(a.address, "GET", target, headers=headers)
    assert answer.status_code == 200 and answer.json()["rows"] == [] and answer.json()["since"] is None
    for refused in (
        member.send(a.address, "GET", target, headers=headers),  # a replay
        member.send(
            a.address, "GET", "/swarm/ledger/journal", headers=member.headers("GET", target, b"", to=a_id)
        ),
        member.send(a.address, "GET", target),  # unsigned
    ):
        assert (refused.status_code, refused.json()) == (401, {"error": "refused"})
