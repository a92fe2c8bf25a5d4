"""Federation as a client relies on it, against real daemons in namespaces: nothing waits on a
lost peer (a handoff to one, a revocation of one), a join is known to every member at once, and
a client with a node's bearer token reads the swarm over its tailnet listener."""

from __future__ import annotations

import json
import ssl
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mesh.swarmnodes import FAKE_MANIFEST, SwarmNode, make
from tests.mesh.unionnodes import session, snapshot, standing
from tests.nodes import Network
from tests.runner.conftest import ADAPTER

SETTLED = 2.0
"""Seconds within which every reachable member knows of a join (issue: 48 s for three nodes)."""


@pytest.fixture
def three(network: Network) -> Iterator[list[SwarmNode]]:
    with tempfile.TemporaryDirectory(prefix="rf", dir="/tmp") as short:

        def harness(node: SwarmNode) -> None:
            node.settings = {"harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"}}
            (node.config_dir / "agents").mkdir(parents=True)
            (node.config_dir / "agents" / "fake.toml").write_text(FAKE_MANIFEST)  # a history that travels

        nodes = make(network, Path(short), 3, harness)
        try:
            yield nodes
        finally:
            for node in nodes:
                node.stop()


def names(node: SwarmNode) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in node.nodes()["nodes"]}


@pytest.mark.parametrize("chain", [False, True], ids=["same admitter", "admitted by the second"])
def test_a_join_is_known_to_every_member_within_two_seconds(three: list[SwarmNode], chain: bool) -> None:
    """The third node joins through the first node (as the second did) or through the second:
    every member knows every other, reachable, and has it in its union, within a couple of
    seconds of the join (not on the next 30 s round)."""
    a, b, c = three
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    key = session(b)
    admitter = b if chain else a
    c.ok("join", admitter.address, "--token", admitter.ok("invite").strip())
    joined = time.monotonic()
    for node, others in ((a, ("n2", "n3")), (b, ("n1", "n3")), (c, ("n1", "n2"))):
        for other in others:
            node.wait_for(
                lambda node=node, other=other: (names(node).get(other) or {}).get("reachable"),
                f"{node.name} knows {other}",
                SETTLED,
            )
            node.wait_for(
                lambda node=node, other=other: (standing(node, other) or {}).get("peer_state") == "reachable",
                f"{other} in {node.name}'s union",
                SETTLED,
            )
    assert any(r["session_key"] == key for r in snapshot(c)["records"])
    assert time.monotonic() - joined < SETTLED + 1


def test_nothing_waits_on_a_lost_peer(three: list[SwarmNode]) -> None:
    """A handoff to a peer known lost is refused at once, like any act; revoking a member whose
    cable is pulled returns once the reachable members heard it; the lost one learns when back."""
    a, b, c = three
    for node in (b, c):
        node.ok("join", a.address, "--token", a.ok("invite").strip())
    started = a.post("/sessions", {"harness": "fake", "cwd": "/tmp", "name": "moving"})
    assert started.status_code == 201, started.text
    key = started.json()["record"]["session_key"]
    a.hears("n3")  # a member never heard is no peer lost: the cut must come after a frame
    c.node.partition()
    try:
        a.wait_for(lambda: (standing(a, "n3") or {}).get("peer_state") == "unreachable", "c lost", 20)
        began = time.monotonic()
        handed = a.post(f"/sessions/{key}/handoff", {"to": "n3"})
        assert (handed.status_code, handed.json()["code"]) == (502, "peer_unreachable"), handed.text
        assert time.monotonic() - began < 0.5
        assert a.get(f"/sessions/{key}").json()["liveness"] != "ended"  # it stayed, resumable
        began = time.monotonic()
        revoked = a.rosterd("revoke", c.identity().node_id)
        took = time.monotonic() - began
        assert revoked.returncode == 0, revoked.stderr
        assert took < 2.0, took
        assert names(b)["n3"]["revoked"] is True  # the reachable member heard it in that round
    finally:
        c.node.heal()
    # back on the network, c's next contact tells it
    c.wait_for(lambda: c.nodes()["revoked"], "c learns it was revoked", 30)


def test_a_client_with_the_nodes_token_reads_the_swarm_on_its_tailnet_listener(
    three: list[SwarmNode],
) -> None:
    """The specification's "swarm paths also on the Tailscale listener": a client with the node's
    bearer token and no certificate, pinning the node's own certificate, gets the union and
    session routes; without the token, or for any other path, the same refusal as a stranger."""
    a, b, _ = three
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    key = session(b)
    a.wait_for(lambda: any(r["session_key"] == key for r in snapshot(a)["records"]), "a hears b")
    token = (a.config_dir / "loopback.token").read_text().strip()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.load_verify_locations(cadata=ssl.DER_cert_to_PEM_cert(a.identity().certificate()))
    bearer = {"authorization": f"Bearer {token}"}
    refused = (401, {"error": "refused"})
    with httpx.Client(verify=context, base_url=f"https://{a.address}", timeout=10, trust_env=False) as client:
        union = client.get("/swarm/snapshot", headers=bearer)
        assert union.status_code == 200 and any(r["session_key"] == key for r in union.json()["records"])
        nodes = client.get("/swarm/nodes", headers=bearer).json()
        assert sorted(row["name"] for row in nodes["nodes"]) == ["n1", "n2"]
        read = client.get(f"/swarm/n2/sessions/{key}", headers=bearer)
        assert read.status_code == 200 and read.json()["session_key"] == key
        for path, headers in (
            ("/swarm/snapshot", {}),  # no token
            ("/swarm/snapshot", {"authorization": "Bearer " + "x" * len(token)}),  # a wrong one
            ("/snapshot", bearer),  # a local route: not on this listener
            ("/swarm/hello", bearer),  # a peer's route
        ):
            answer = client.get(path, headers=headers)
            assert (answer.status_code, answer.json()) == refused, path
        invite = client.post("/swarm/invite", headers=bearer, json={"ttl_minutes": 5})
        assert (invite.status_code, invite.json()) == refused  # membership stays on the machine
    counted = a.nodes()["refused"]
    assert counted.get("no_certificate", 0) >= 5, counted
    assert json.loads(a.ok("nodes", "--json"))["connections"]["open"] >= 0
