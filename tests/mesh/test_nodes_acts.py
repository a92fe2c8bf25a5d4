"""Proxied actions between real daemons in namespaces: a headless session over the fake ACP
adapter on one node, driven from another node's HTTP API, ``rosterd`` and MCP.

Sessions are named here by their exact key (its node-id prefix names the owner, so no roster
exchange is needed) or under ``/swarm/{node}/sessions/{name}``, which names the owner outright;
a name resolved from the peers' rosters is :mod:`tests.actions.test_swarm_lookup`'s subject.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from roost.remote.swarm import canonical
from tests.mcpserver.client import call
from tests.mesh.swarmnodes import Peer, SwarmNode, make
from tests.mesh.unionnodes import standing
from tests.nodes import Network
from tests.runner.conftest import ADAPTER

UNREACHABLE_WITHIN = 4.5
"""Seconds a forward to a node whose cable was just pulled may take to refuse: the dialer's 3 s
connect bound for an act, and room for a loaded machine."""


def prompts(log: Path) -> list[str]:
    """Every prompt's text the fake adapter was sent, in order."""
    found = []
    for line in log.read_bytes().splitlines() if log.exists() else []:
        if line.startswith(b"< ") and b'"session/prompt"' in line:
            message = json.loads(line[2:])
            found.append("".join(part.get("text", "") for part in message["params"]["prompt"]))
    return found


def journal(node: SwarmNode) -> list[dict[str, Any]]:
    return node.get("/journal").json()["entries"]


def mcp(node: SwarmNode) -> Client:
    http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(node.socket)), timeout=60)
    return Client(streamable_http_client("http://rosterd/mcp", http_client=http))


@pytest.fixture
def pair(network: Network, tmp_path: Path) -> Iterator[tuple[SwarmNode, SwarmNode, Path]]:
    """Two joined nodes: ``a`` runs headless sessions over the fake adapter, ``b`` drives them.
    Their homes are under a short path: a holder's socket path must fit in ``sun_path``."""
    log = tmp_path / "acp.log"
    with tempfile.TemporaryDirectory(prefix="ra", dir="/tmp") as short:
        yield from _pair(network, Path(short), log)


def _pair(network: Network, root: Path, log: Path) -> Iterator[tuple[SwarmNode, SwarmNode, Path]]:

    def owner(node: SwarmNode) -> None:
        if node.name == "n1":
            node.settings = {
                "harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"},
                "runner": {"idle_timeout_s": 600},
            }
            node.extra_env = {"FAKE_ACP_LOG": str(log)}

    a, b = make(network, root, 2, owner)
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    try:
        yield a, b, log
    finally:
        for node in (a, b):  # every node ends (its holders with its PID namespace) before its home goes
            node.stop()


def start(a: SwarmNode, tmp_path: Path, name: str) -> str:
    answer = a.post(
        "/sessions", {"harness": "fake", "cwd": str(tmp_path), "policy": "attention", "name": name}
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["record"]["session_key"])


def test_a_prompt_and_a_permission_answer_from_another_node_arrive_once_and_are_journalled(
    pair: tuple[SwarmNode, SwarmNode, Path], tmp_path: Path
) -> None:
    a, b, log = pair
    key = start(a, tmp_path, "worker")

    # the HTTP API: one prompt, answered with the owner's record once the turn is idle
    answer = b.post(f"/sessions/{key}/prompt", {"text": "first from b", "wait": "idle", "timeout_s": 30})
    assert answer.status_code == 200, answer.text
    assert answer.json()["record"]["session_key"] == key and answer.json()["wait"]["reached"] is True
    assert answer.json()["record"]["node"] == "n1"
    # rosterd, by the exact key, and the API under /swarm/{node}/sessions/{name}: the owner resolves the name
    b.ok("prompt", key, "second from b", "--wait", "idle")
    named = b.post(
        "/swarm/n1/sessions/worker/prompt", {"text": "third from b", "wait": "idle", "timeout_s": 30}
    )
    assert named.status_code == 200, named.text
    assert prompts(log) == ["first from b", "second from b", "third from b"]

    # the owner's refusals come back unchanged: its status, message and code
    bad = b.post(f"/sessions/{key}/prompt", {"text": "x", "status_epoch": 1, "occupant_id": 1, "revision": 1})
    here = a.post(
        f"/sessions/{key}/prompt", {"text": "x", "status_epoch": 1, "occupant_id": 1, "revision": 1}
    )
    assert (bad.status_code, bad.json()) == (here.status_code, here.json())
    assert b.get(f"/sessions/{key}").json() == a.get(f"/sessions/{key}").json()

    # a permission asked on a, answered from b: the request resolves, and a's journal says through n2
    assert b.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
    pending = a.wait_for(
        lambda: (a.get(f"/sessions/{key}").json().get("pending") or {}).get("id"), "a request"
    )
    answered = b.post(f"/sessions/{key}/permission", {"option": "allow", "request_id": pending})
    assert answered.status_code == 200, answered.text
    again = b.post(f"/sessions/{key}/permission", {"option": "allow", "request_id": pending})
    assert (again.status_code, again.json()["code"]) == (409, "nothing_pending")
    lines = journal(a)
    [answer_line] = [line for line in lines if line["kind"] == "answer"]
    assert (answer_line["answer"], answer_line["by"], answer_line["via"], answer_line["through"]) == (
        "allow",
        "local user",
        "api",
        "n2",
    )
    acts = [
        (line["action"], line["via"], line["through"], line["status"])
        for line in lines
        if line["kind"] == "act"
    ]
    assert acts[:3] == [
        ("prompt", "api", "n2", 200),
        ("prompt", "cli", "n2", 200),
        ("prompt", "api", "n2", 200),
    ]
    assert ("permission", "api", "n2", 409) in acts
    assert not [line for line in journal(b) if line["kind"] == "act"]  # b forwarded: it acted on nothing

    # MCP on b: read the state, send, and an allow_always a's MCP config keeps off is refused by a
    state = call(mcp(b), "session.read_state", name=key)
    assert not state.is_error and state.structured_content["session_key"] == key
    sent = call(mcp(b), "session.send", name=key, prompt="fourth from mcp", wait_until="idle", timeout_s=30)
    assert not sent.is_error and sent.structured_content["wait"]["reached"] is True, sent.structured_content
    assert b.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
    a.wait_for(lambda: a.get(f"/sessions/{key}").json().get("activity") == "needs_attention", "a request")
    always = call(mcp(b), "session.allow", name=key, always=True)
    assert always.is_error and always.structured_content["code"] == "allow_always_off"
    assert call(mcp(b), "session.deny", name=key, reason="not now").is_error is False
    assert prompts(log) == ["first from b", "second from b", "third from b", "ASK", "fourth from mcp", "ASK"]
    [mcp_answer] = [line for line in journal(a) if line["kind"] == "answer" and line["via"] == "mcp"]
    assert (mcp_answer["answer"], mcp_answer["by"], mcp_answer["through"]) == ("reject", "token holder", "n2")


def test_every_headless_verb_from_another_node_is_done_by_the_owner(
    pair: tuple[SwarmNode, SwarmNode, Path], tmp_path: Path
) -> None:
    a, b, _ = pair
    key = start(a, tmp_path, "worker")
    assert json.loads(b.ok("read", key, "--json")) == a.get(f"/sessions/{key}").json()
    b.ok("name", key, "renamed")
    assert a.get(f"/sessions/{key}").json()["name"] == "renamed"
    assert b.post(f"/sessions/{key}/suspend").json()["record"]["liveness"] == "suspended"
    assert b.post(f"/sessions/{key}/resume").json()["record"]["liveness"] == "live"
    assert b.post(f"/sessions/{key}/cancel").status_code == a.post(f"/sessions/{key}/cancel").status_code
    spawned = b.post(f"/sessions/{key}/spawn", {"harness": "fake", "cwd": str(tmp_path), "name": "child"})
    assert spawned.status_code == 201, spawned.text
    child = spawned.json()["record"]
    assert (child["node"], child["parent_session_key"]) == ("n1", key)
    for session in (child["session_key"], key):
        assert b.post(f"/sessions/{session}/stop").json()["record"]["liveness"] == "ended"
    acts = [(line["action"], line["by"], line["through"]) for line in journal(a) if line["kind"] == "act"]
    assert [action for action, _, _ in acts] == [
        "name",
        "suspend",
        "resume",
        "cancel",
        "spawn",
        "stop",
        "stop",
    ]
    assert {(by, through) for _, by, through in acts} == {("local user", "n2")}


@pytest.mark.alone  # a bound on time
def test_an_unreachable_owner_is_refused_at_once_and_nothing_arrives_later(
    pair: tuple[SwarmNode, SwarmNode, Path], tmp_path: Path
) -> None:
    a, b, log = pair
    key = start(a, tmp_path, "worker")
    assert (
        b.post(f"/sessions/{key}/prompt", {"text": "before", "wait": "idle", "timeout_s": 30}).status_code
        == 200
    )
    a.node.partition()
    try:
        began = time.monotonic()
        answer = b.post(f"/sessions/{key}/prompt", {"text": "while down"})
        took = time.monotonic() - began
        assert (answer.status_code, answer.json()["code"]) == (502, "peer_unreachable"), answer.text
        assert took < UNREACHABLE_WITHIN, took
        done = b.rosterd("prompt", key, "while down, by rosterd")
        assert done.returncode == 3, done.stderr
        assert "did not answer" in done.stderr
        b.wait_for(lambda: (standing(b, "n1") or {}).get("peer_state") == "unreachable", "n1 seen gone")
        began = time.monotonic()
        known = b.post(f"/sessions/{key}/prompt", {"text": "known gone"})
        took = time.monotonic() - began
        assert (known.status_code, known.json()["code"]) == (502, "peer_unreachable"), known.text
        assert "unreachable for" in known.json()["error"] and took < 0.5, (known.text, took)
    finally:
        a.node.heal()
    time.sleep(3)  # nothing was queued: once the cable is back, nothing more arrives
    assert prompts(log) == ["before"]
    assert (
        b.post(f"/sessions/{key}/prompt", {"text": "after", "wait": "idle", "timeout_s": 30}).status_code
        == 200
    )
    assert prompts(log) == ["before", "after"]
    a.stop()  # a machine that is up with no daemon on it: the connection is refused, not lost
    began = time.monotonic()
    answer = b.post(f"/sessions/{key}/prompt", {"text": "no daemon"})
    assert (answer.status_code, answer.json()["code"]) == (502, "peer_unreachable"), answer.text
    assert time.monotonic() - began < 1.0


def test_a_forwarded_act_naming_another_nodes_session_is_refused_by_the_receiver(
    pair: tuple[SwarmNode, SwarmNode, Path], tmp_path: Path
) -> None:
    a, b, log = pair
    key = start(a, tmp_path, "worker")
    as_b = Peer(b.identity(), b.swarm_key(), [a.identity().certificate()])
    other = f"{b.identity().node_id}:4242:1"

    def act(session: str, verb: str = "prompt", body: str = '{"text": "sneaky"}') -> tuple[int, dict]:
        document = canonical.encode(
            {
                "session": session,
                "face": "api",
                "verb": verb,
                "body": body,
                "by": "x",
                "via": "api",
                "wait_ms": 0,
            }
        )
        answer = as_b.send(
            a.address,
            "POST",
            "/swarm/act",
            document,
            as_b.headers("POST", "/swarm/act", document, to=a.identity().node_id),
        )
        return answer.status_code, answer.json()

    status, said = act(other)
    assert (status, said["code"]) == (409, "not_owner")
    status, said = act(key, "invite")
    assert (status, said["code"]) == (404, "no_such_verb")
    status, said = act(key, body="[1, 2")
    assert status == 400
    assert prompts(log) == []
