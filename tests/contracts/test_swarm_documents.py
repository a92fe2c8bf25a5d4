"""The union's documents carry the fields docs/contracts.md tables for them, in that order."""

from __future__ import annotations

from roost.remote.swarm import union
from roost.remote.swarm.feed import NODE, NODE_LEFT, SNAPSHOT, TERMINALS, SwarmChange
from roost.remote.swarm.peers import Peers
from roost.truth.roster import records
from tests.contracts.tables import names, table

DOCS = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}
EVERY = DOCS["swarm change (changes --json, GET /swarm/changes), every event"]
NOW = 1_796_000_000.0


def test_the_union_and_its_rows_are_the_documented_fields() -> None:
    own = records.Record("desk", "a" * 16, f"{'a' * 16}:1:1", 1, 1, NOW)
    document = union.document("desk", "a" * 16, [own], Peers("a" * 16), epoch=1, seq=0, now=NOW)
    (key,) = [name for name in DOCS if name.startswith("union (")]
    assert list(document) == DOCS[key]
    assert list(document["nodes"][0]) == DOCS["union nodes[]"]
    shell = {"pane": "%1", "session": "main", "window": "zsh", "name": None, "command": "zsh", "cwd": "/"}
    listed = union.capture("desk", "a" * 16, [own], Peers("a" * 16), NOW, (shell,)).document(1, 0)
    (terminals,) = [name for name in DOCS if name.startswith("union nodes[] terminals")]
    assert list(listed["nodes"][0]["terminals"][0]) == DOCS[terminals]
    fields = DOCS["record (read --json, each of records)"]
    (then,) = [name for name in DOCS if name.startswith("union record (")]
    assert list(document["records"][0]) == [*fields, *DOCS[then]]


def test_each_swarm_change_is_the_documented_fields() -> None:
    record = union.served(records.Record("desk", "a" * 16, f"{'a' * 16}:1:1", 1, 1, NOW), "local", 0)
    row = {"peer_state": "unreachable", "peer_age_ms": 5, "sessions": 1, "dropped": 0}
    made = {
        "a session's event": SwarmChange(1, "activity", NOW, 1, "a" * 16, "desk", record=record),
        NODE: SwarmChange(2, NODE, NOW, 1, "b" * 16, "laptop", detail=row),
        NODE_LEFT: SwarmChange(3, NODE_LEFT, NOW, 1, "b" * 16, "laptop", detail={"reason": "revoked"}),
        TERMINALS: SwarmChange(4, TERMINALS, NOW, 1, "b" * 16, "laptop", detail={"terminals": []}),
        SNAPSHOT: SwarmChange(3, SNAPSHOT, NOW, 1, "a" * 16, "desk", snapshot={}),
    }
    for kind, change in made.items():
        (row,) = [name for name in DOCS if name.startswith(f"swarm change, {kind}, after those")]
        assert list(change.to_json()) == [*EVERY, *DOCS[row]], kind
