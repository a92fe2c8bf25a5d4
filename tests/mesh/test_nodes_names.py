"""A display name that can be set is usable everywhere: a name holding ``/`` (or ``%``) set on
one node reads, renames and explains by that name on the owner and through another node, by
``rosterd`` and over the API, between real daemons in namespaces (issue 33: 3)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from tests.mesh.unionnodes import session, snapshot, swarm
from tests.nodes import Network


def test_a_name_with_a_slash_is_usable_on_the_owner_and_through_a_peer(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    key = session(a)
    a.ok("name", key, "tests/holder")
    b.wait_for(
        lambda: any(r.get("name") == "tests/holder" for r in snapshot(b)["records"]), "b holds the name"
    )
    for node in (a, b):  # the owner, and a peer that forwards each call to it
        for verb in ("read", "explain"):
            said = json.loads(node.ok(verb, "tests/holder", "--json"))
            assert said["session_key"] == key, (node.name, verb)
        answer = node.get(f"/sessions/{quote('tests/holder', safe='')}")
        assert answer.json()["session_key"] == key
        answer = node.get(f"/swarm/n1/sessions/{quote('tests/holder', safe='')}/explain")
        assert answer.json()["session_key"] == key
    b.ok("name", "tests/holder", "100%/done")  # renamed through the peer, by its name
    a.wait_for(
        lambda: a.get(f"/sessions/{quote('100%/done', safe='')}").json()["session_key"] == key, "renamed"
    )
    b.wait_for(
        lambda: any(r.get("name") == "100%/done" for r in snapshot(b)["records"]), "b holds the new name"
    )
    assert json.loads(b.ok("read", "100%/done", "--json"))["session_key"] == key
    gone = b.rosterd("read", "tests/holder")
    assert (gone.returncode, gone.stderr) == (1, "rosterd read: no session 'tests/holder'\n")
