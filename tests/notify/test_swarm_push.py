"""Web Push for another node's sessions: a device subscribed on one node is pushed about a
session on another node that needs input, as about one of its own, and may say it views (and
has seen) that session by its key. Real daemons in namespaces; the push service stub listens
on the bridge's address, which the nodes reach."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.push_service import PushService
from tests.mesh.swarmnodes import SwarmNode, make
from tests.mesh.unionnodes import snapshot
from tests.nodes import Network
from tests.runner.conftest import ADAPTER

WITHIN = 15.0


@pytest.fixture
def pair(network: Network) -> Iterator[tuple[SwarmNode, SwarmNode]]:
    """n1 runs headless sessions over the fake adapter; n2 joined it (short homes: a holder's
    socket path must fit in ``sun_path``)."""
    with tempfile.TemporaryDirectory(prefix="rp", dir="/tmp") as short:

        def owner(node: SwarmNode) -> None:
            if node.name == "n1":
                node.settings = {"harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"}}

        a, b = make(network, Path(short), 2, owner)
        b.ok("join", a.address, "--token", a.ok("invite").strip())
        try:
            yield a, b
        finally:
            for node in (a, b):
                node.stop()


def test_a_device_on_one_node_is_pushed_about_another_nodes_request(
    pair: tuple[SwarmNode, SwarmNode], network: Network, tmp_path: Path
) -> None:
    a, b = pair
    service = PushService(b.get("/push/vapid-key").json()["key"], host=f"100.64.{network.subnet}.1")
    try:
        subscription = service.subscription("phone")
        assert b.post("/push/subscribe", subscription).status_code == 201
        started = a.post("/sessions", {"harness": "fake", "cwd": str(tmp_path), "policy": "attention"})
        key = started.json()["record"]["session_key"]
        b.wait_for(lambda: any(r["session_key"] == key for r in snapshot(b)["records"]), "n2 holds it")
        assert b.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
        b.wait_for(lambda: service.pushes, "a push", WITHIN)
        [pushed] = service.pushes
        assert pushed["payload"]["session_key"] == key and pushed["payload"]["state"] == "needs input"
        assert pushed["payload"]["request"]["answers"] == ["allow", "reject"]

        # the device says it views that session (by the key of another node), and that it saw it
        viewing = {"endpoint": subscription["endpoint"], "session": key}
        assert b.post("/push/viewing", viewing).status_code == 204
        seen = b.post(f"/sessions/{key}/seen")
        assert seen.status_code == 200 and seen.json()["session_key"] == key
        assert b.post("/push/viewing", {**viewing, "session": "nowhere:1:1"}).status_code == 404
        # viewed: answering and asking again tells the device nothing
        pending = a.get(f"/sessions/{key}").json()["pending"]["id"]
        assert (
            b.post(f"/sessions/{key}/permission", {"option": "allow", "request_id": pending}).status_code
            == 200
        )
        a.wait_for(lambda: a.get(f"/sessions/{key}").json()["activity"] != "needs_attention", "answered")
        assert b.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
        a.wait_for(lambda: a.get(f"/sessions/{key}").json()["activity"] == "needs_attention", "asks again")
        time.sleep(3)
        assert len(service.pushes) == 1, service.pushes
    finally:
        service.close()
