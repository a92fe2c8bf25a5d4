"""The specification's two client sketches, across three real daemons in namespaces, written only
against the documented API: the notifier (a webhook of every change, caught up from
``/swarm/changes`` when a delivery is missing; ``examples/notify.py``) and the approval workflow
(``examples/approve_push.py``). A permission raised on any node reaches a webhook registered on
any other exactly once, and is answered from there; a ``git push`` is allowed or rejected by the
workflow running on a third node, by what a sibling session on yet another node says."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.mesh.swarmnodes import SwarmNode, make
from tests.mesh.unionnodes import snapshot
from tests.nodes import Network, _children
from tests.runner.conftest import ADAPTER
from tests.signals import send_exactly, started

EXAMPLES = REPO / "examples"


@pytest.fixture
def three(network: Network) -> Iterator[list[SwarmNode]]:
    """Three joined nodes, each able to run headless sessions over the fake ACP adapter (homes
    under a short path: a holder's socket path must fit in ``sun_path``)."""
    with tempfile.TemporaryDirectory(prefix="rc", dir="/tmp") as short:

        def harness(node: SwarmNode) -> None:
            node.settings = {
                "harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"},
                "runner": {"idle_timeout_s": 600},
            }

        nodes = make(network, Path(short), 3, harness)
        for node in nodes[1:]:
            node.ok("join", nodes[0].address, "--token", nodes[0].ok("invite").strip())
        try:
            yield nodes
        finally:
            for node in nodes:
                node.stop()


def start(node: SwarmNode, name: str, **more: Any) -> str:
    answer = node.post("/sessions", {"harness": "fake", "cwd": "/tmp", "name": name, **more})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["record"]["session_key"])


def heard(node: SwarmNode, key: str, what: str, wanted: Any, timeout: float = 20) -> dict[str, Any]:
    return node.wait_for(
        lambda: next((r for r in snapshot(node)["records"] if r["session_key"] == key and wanted(r)), None),
        what,
        timeout,
    )


def free_port(node: SwarmNode) -> int:
    """A port free on 127.0.0.1 inside the node (its loopback is its own; any high port is)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1]) + 1


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_permission_on_any_node_reaches_a_webhook_on_another_exactly_once_and_is_answered_there(
    three: list[SwarmNode], tmp_path: Path
) -> None:
    a, b, c = three
    said = tmp_path / "notify.out"
    with open(said, "w") as out:
        notifier = a.node.start(sys.executable, str(EXAMPLES / "notify.py"), str(a.socket), str(free_port(a)),
                                env=a.env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    a.wait_for(lambda: lines(said), "the notifier's webhook")
    assert lines(said)[0].startswith("listening for every node's changes")

    key = start(c, "deploy", policy="attention")
    assert c.post(f"/sessions/{key}/prompt", {"text": "ASK make deploy"}).status_code == 200
    heard(a, key, "c's request, on a", lambda r: (r.get("pending") or {}).get("answerable"))
    told = a.wait_for(lambda: [line for line in lines(said) if "deploy" in line], "the notifier tells it")
    assert told == ["n3: deploy needs input: make deploy"]

    # answered from a, which hands it to c: the turn goes on there, and nobody is told twice
    answered = a.post(f"/sessions/{key}/permission", {"option": "allow"})
    assert answered.status_code == 200, answered.text
    heard(a, key, "the turn ends", lambda r: r["activity"] == "idle" and not r.get("pending"))
    b_key = start(b, "review", policy="attention")
    assert b.post(f"/sessions/{b_key}/prompt", {"text": "ASK git diff"}).status_code == 200
    a.wait_for(lambda: [line for line in lines(said) if "review" in line], "b's request, told on a")
    time.sleep(1)
    assert [line for line in lines(said) if "needs input" in line] == [
        "n3: deploy needs input: make deploy",
        "n2: review needs input: git diff",
    ]

    # deliveries lost: the notifier stops answering (stopped, as a machine that sleeps) while a
    # request comes; a's deliveries to it time out and are dropped. Woken, it hears of the next
    # request, sees the gap in seq, fills it from /swarm/changes, and tells each request once
    (python,) = _children(_children(notifier.pid)[0]) or _children(notifier.pid)
    ticks = started(python)
    assert send_exactly(python, ticks, signal.SIGSTOP)
    try:
        one = start(c, "one", policy="attention")
        assert c.post(f"/sessions/{one}/prompt", {"text": "ASK echo one"}).status_code == 200
        a.wait_for(
            lambda: a.get("/hooks").json()["hooks"][0]["deliveries"]["failed"] >= 1, "a delivery lost", 30
        )
    finally:
        send_exactly(python, ticks, signal.SIGCONT)
    two = start(c, "two", policy="attention")
    assert c.post(f"/sessions/{two}/prompt", {"text": "ASK echo two"}).status_code == 200
    a.wait_for(lambda: [line for line in lines(said) if "two needs input" in line], "the gap filled")
    time.sleep(1)
    assert [line for line in lines(said) if "needs input" in line] == [
        "n3: deploy needs input: make deploy",
        "n2: review needs input: git diff",
        "n3: one needs input: echo one",
        "n3: two needs input: echo two",
    ]
    a.node.end(notifier)
    assert a.get("/hooks").json()["hooks"] == []  # it removed its webhook on the way out


def test_the_approval_workflow_answers_a_push_on_one_node_by_a_sibling_on_another(
    three: list[SwarmNode], tmp_path: Path
) -> None:
    """``examples/approve_push.py`` follows b's ``/swarm/changes``; the push is asked on c; its
    sibling ``tests-NAME`` runs on a."""
    a, b, c = three
    said = tmp_path / "approve.out"
    with open(said, "w") as out:
        b.node.start(sys.executable, str(EXAMPLES / "approve_push.py"), str(b.socket), env=b.env,
                     stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    tests = start(a, "tests-ship")  # a headless turn's last words are its recap
    assert a.post(f"/sessions/{tests}/prompt", {"text": "3 passed", "wait": "idle"}).status_code == 200
    heard(b, tests, "the green recap, on b", lambda r: "passed" in (r.get("recap") or ""))
    ship = start(c, "ship", policy="attention")
    assert c.post(f"/sessions/{ship}/prompt", {"text": "ASK git push origin main"}).status_code == 200
    b.wait_for(lambda: [line for line in lines(said) if ship in line], "the workflow answers")
    assert lines(said) == [f"{ship} allow 200"]
    heard(c, ship, "the push ran", lambda r: r["activity"] == "idle" and not r.get("pending"))
    # a request that is no push is left to a person
    other = start(c, "other", policy="attention")
    assert c.post(f"/sessions/{other}/prompt", {"text": "ASK rm -rf build"}).status_code == 200
    heard(c, other, "the request stays", lambda r: (r.get("pending") or {}).get("answerable"))
    time.sleep(1)
    assert lines(said) == [f"{ship} allow 200"]
