"""What the union-roster tests do to real nodes: a session on one node, a swarm of several,
and reading ``/swarm/snapshot`` and ``/swarm/changes`` as a client would."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import FAKE_AGENT
from tests.daemon.fixture import pid_start_ticks
from tests.mesh.swarmnodes import SwarmNode, make
from tests.nodes import Network, _children


def swarm(network: Network, root: Path, count: int) -> list[SwarmNode]:
    """``count`` nodes, every one after the first admitted by the first."""
    nodes = make(network, root, count)
    for node in nodes[1:]:
        node.ok("join", nodes[0].address, "--token", nodes[0].ok("invite").strip())
    return nodes


def daemon_pid(node: SwarmNode) -> int:
    """The daemon's pid as this machine sees it (``unshare`` forks it as its namespace's first)."""
    assert node.proc is not None
    (pid,) = _children(node.proc.pid)
    return pid


def process(node: SwarmNode, seconds: int = 600) -> dict[str, int]:
    """A process inside ``node``'s namespaces for ``seconds``, ended with the node; its pid (as
    the node sees it) and start ticks, what a claim names it by."""
    argv = ["nsenter", "-t", str(daemon_pid(node)), "-p", "-m", "-n", "sleep", str(seconds)]
    proc = subprocess.Popen(argv)
    node.node.procs.append(proc)
    deadline = time.monotonic() + 10
    while not (children := _children(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.01)
    (host_pid,) = children
    status = Path(f"/proc/{host_pid}/status").read_text()
    inner = int(next(line for line in status.splitlines() if line.startswith("NSpid:")).split()[-1])
    return {"pid": inner, "start_ticks": pid_start_ticks(host_pid)}


def client(node: SwarmNode) -> httpx.Client:
    """A client of ``node``'s unix socket."""
    return httpx.Client(
        transport=httpx.HTTPTransport(uds=str(node.socket)), base_url="http://rosterd", timeout=10
    )


def session(node: SwarmNode, **fields: Any) -> str:
    """A hook's claim about a new process in ``node``; its session key."""
    with client(node) as talk:
        answer = talk.post("/claim", json={**process(node), "activity": "working", **fields})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["session_key"])


def snapshot(node: SwarmNode) -> dict[str, Any]:
    return node.get("/swarm/snapshot").json()


def standing(node: SwarmNode, name: str) -> dict[str, Any] | None:
    """``name``'s row in ``node``'s union, None when the union does not hold it."""
    return next((row for row in snapshot(node)["nodes"] if row["node"] == name), None)


def cursor(node: SwarmNode) -> str:
    found = snapshot(node)
    return f"{found['status_epoch']}:{found['seq']}"


def changes(node: SwarmNode, since: str, timeout: float = 15) -> Iterator[dict[str, Any]]:
    """``node``'s ``/swarm/changes`` frames after ``since``, each with ``received`` (monotonic),
    until ``timeout`` (a quiet stream ends the frames then)."""
    transport = httpx.HTTPTransport(uds=str(node.socket))
    with (
        httpx.Client(transport=transport, base_url="http://rosterd", timeout=timeout) as client,
        client.stream("GET", f"/swarm/changes?since={since}") as answer,
        contextlib.suppress(httpx.ReadTimeout),
    ):
        assert answer.status_code == 200
        deadline = time.monotonic() + timeout
        for line in answer.iter_lines():
            if line.startswith("data: "):
                yield {**json.loads(line[6:]), "received": time.monotonic()}
            if time.monotonic() > deadline:
                return


def first(frames: Iterator[dict[str, Any]], wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    found = next((frame for frame in frames if wanted(frame)), None)
    assert found is not None, "no such change in time"
    return found


def launched(owner: SwarmNode, cwd: Path, log: Path, name: str = "far", hook: bool = True) -> dict[str, Any]:
    """The fake agent TUI in a new window ``name`` of ``owner``'s tmux server (every key it
    reads appended to ``log``); its record, once its hook's claim (stamped with its pane) is in,
    or without ``hook`` (an agent with no hooks installed) once the process scan has found it."""
    started = " --start-hook" if hook else ""
    command = f"ROOST_AGENT=claude {sys.executable} {FAKE_AGENT}{started} --log {log}"
    answer = owner.post("/launch", {"command": command, "cwd": str(cwd), "name": name})
    assert answer.status_code == 201, answer.text
    pane = answer.json()["pane"]

    def mine() -> dict[str, Any] | None:
        return next(
            (r for r in snapshot(owner)["records"] if (r.get("tmux") or {}).get("pane") == pane), None
        )

    return dict(owner.wait_for(mine, "the agent's session"))
