"""Handing a headless session from one node to another: real daemons in namespaces, each with
its own HOME, the fake ACP adapter keeping each session's history as a file under that HOME.

The fake harness's manifest (a user's file in each node's config) names that file as its
transcript, as Claude's and Codex's packaged manifests name theirs; the real adapters walk the
same path in tests/agents/test_handoff_claude.py.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from roost.remote.swarm import canonical
from tests.mesh.swarmnodes import FAKE_MANIFEST, Peer, SwarmNode, make
from tests.nodes import Network
from tests.runner.conftest import ADAPTER

pytestmark = pytest.mark.alone


@pytest.fixture
def pair(network: Network) -> Iterator[tuple[SwarmNode, SwarmNode, Path]]:
    """Two joined nodes, each running the fake adapter with its history under its own HOME, and
    a project folder both can see. Homes are under a short path: a holder's socket path must fit
    in ``sun_path``."""
    with tempfile.TemporaryDirectory(prefix="rh", dir="/tmp") as short:
        root = Path(short)
        project = root / "project"
        project.mkdir()

        def prepare(node: SwarmNode) -> None:
            node.settings = {
                "harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"},
                "runner": {"idle_timeout_s": 600},
            }
            node.extra_env = {"FAKE_ACP_STATE": str(node.root / "home" / ".fake-acp")}
            (node.root / "home" / ".fake-acp").mkdir()
            (node.config_dir / "agents").mkdir(parents=True)
            (node.config_dir / "agents" / "fake.toml").write_text(FAKE_MANIFEST)

        a, b = make(network, root, 2, prepare)
        b.ok("join", a.address, "--token", a.ok("invite").strip())
        try:
            yield a, b, project
        finally:
            for node in (a, b):
                node.stop()


def start(node: SwarmNode, cwd: Path) -> str:
    answer = node.post("/sessions", {"harness": "fake", "cwd": str(cwd)})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["record"]["session_key"])


def turn(node: SwarmNode, key: str, text: str) -> dict[str, Any]:
    answer = node.post(f"/sessions/{key}/prompt", {"text": text, "wait": "idle", "timeout_s": 30})
    assert answer.status_code == 200, answer.text
    assert answer.json()["wait"]["reached"], answer.text
    return dict(answer.json()["record"])


def record(node: SwarmNode, key: str) -> dict[str, Any]:
    return dict(node.get(f"/sessions/{key}").json())


def test_a_session_handed_off_goes_on_there_with_its_history_and_ends_here(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    key = start(a, project)
    turn(a, key, "the first words")
    session_id = turn(a, key, "the second words")["session_id"]
    began = time.monotonic()
    done = a.rosterd("handoff", key, "--to", "n2", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    here, there = answer["record"], answer["there"]
    assert (here["liveness"], here["ended_reason"]) == ("ended", "handed_off")
    assert here["handed_to"] == {
        "node": "n2",
        "node_id": b.identity().node_id,
        "session_key": there["session_key"],
    }
    assert there["session_key"].startswith(b.identity().node_id + ":")
    assert (there["session_id"], there["liveness"], there["cwd"]) == (session_id, "live", str(project))
    assert there["activity_event"] == "resumed"
    reply = turn(b, there["session_key"], "HISTORY")["recap"]
    print(f"fake adapter: handoff and a turn there {time.monotonic() - began:.2f} s")
    assert reply == "history: 2 turns; last: the second words"
    # The transcript travelled to the same path under B's home; A's session is over, its files kept.
    assert (b.root / "home" / ".fake-acp" / f"{session_id}.json").exists()
    assert record(a, key)["ended_reason"] == "handed_off"
    assert a.post(f"/sessions/{key}/prompt", {"text": "again"}).status_code == 409  # ended: nothing to prompt
    # Anything the person asks of it next on A is the new session's, forwarded by key to B.
    assert record(a, there["session_key"])["session_id"] == session_id


def test_a_handoff_to_a_node_without_the_folder_is_refused_and_the_session_stays_whole(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    folder = project / "repo"
    folder.mkdir()
    key = start(a, folder)
    turn(a, key, "the only words")
    folder.rename(project / "elsewhere")  # the nodes share one file system: gone for both now
    done = a.rosterd("handoff", key, "--to", "n2")
    assert done.returncode == 1, done.stdout
    assert f"{folder} is not a folder on n2" in done.stderr
    assert "the repository has to exist on both sides" in done.stderr
    kept = record(a, key)
    assert (kept["liveness"], kept["ended_reason"]) == ("suspended", None)
    assert "n2 refused the handoff" in kept["error_reason"]
    assert [r for r in b.get("/snapshot").json()["records"] if r.get("lane") == "headless"] == []
    (project / "elsewhere").rename(folder)
    assert turn(a, key, "HISTORY")["recap"] == "history: 1 turns; last: the only words"


def test_a_different_transcript_on_the_target_is_never_overwritten(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    key = start(a, project)
    session_id = turn(a, key, "mine")["session_id"]
    theirs = b.root / "home" / ".fake-acp" / f"{session_id}.json"
    theirs.write_text('[["someone else", "else"]]')
    answer = a.post(f"/sessions/{key}/handoff", {"to": "n2"})
    assert (answer.status_code, answer.json()["code"]) == (409, "transcript_differs"), answer.text
    assert "nothing was overwritten" in answer.json()["error"]
    assert theirs.read_text() == '[["someone else", "else"]]'
    assert record(a, key)["liveness"] == "suspended"


def test_a_target_without_the_adapter_refuses_and_writes_no_transcript(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    """A refused handoff writes nothing on the target: its transcript least of all (the adapter
    is checked before any file is placed, and a file placed is taken back when the session
    does not open)."""
    a, b, project = pair
    key = start(a, project)
    session_id = turn(a, key, "mine")["session_id"]
    b.stop()
    b.settings["harness.fake"]["adapter"] = "/nowhere/fake-acp-adapter"
    b.start()
    a.hears("n2")
    answer = a.post(f"/sessions/{key}/handoff", {"to": "n2"})
    assert (answer.status_code, answer.json()["code"]) == (409, "adapter_missing"), answer.text
    assert not (b.root / "home" / ".fake-acp" / f"{session_id}.json").exists()
    assert list((b.root / "home" / ".fake-acp").iterdir()) == []
    assert record(a, key)["liveness"] == "suspended"


def test_refusals_leave_everything_as_it_was(pair: tuple[SwarmNode, SwarmNode, Path]) -> None:
    a, _b, project = pair
    key = start(a, project)
    nowhere = a.post(f"/sessions/{key}/handoff", {"to": "n9"})
    assert (nowhere.status_code, nowhere.json()["code"]) == (404, "no_such_node")
    itself = a.post(f"/sessions/{key}/handoff", {"to": "n1"})
    assert (itself.status_code, itself.json()["code"]) == (400, "same_node")
    bad = a.post(f"/sessions/{key}/handoff", {"to": "n2", "also": 1})
    assert bad.status_code == 400
    assert a.rosterd("handoff", key).returncode == 1
    assert record(a, key)["liveness"] == "live"  # nothing refused here suspended it
    busy_prompt = a.post(f"/sessions/{key}/prompt", {"text": "SLOW 3"})
    assert busy_prompt.status_code == 200
    busy = a.post(f"/sessions/{key}/handoff", {"to": "n2"})
    assert (busy.status_code, busy.json()["code"]) == (409, "busy")


def test_the_target_killed_mid_import_leaves_the_session_suspended_here_and_resumable(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    b.stop()
    b.extra_env["FAKE_ACP_LOAD_DELAY"] = "30"
    b.start()
    a.hears("n2")
    key = start(a, project)
    turn(a, key, "before the cut")
    answered: dict[str, Any] = {}

    def hand() -> None:
        response = a.post(f"/sessions/{key}/handoff", {"to": "n2"}, timeout=150)
        answered.update(status=response.status_code, body=response.json())

    thread = threading.Thread(target=hand)
    thread.start()
    b.wait_for(
        lambda: any(r.get("lane") == "headless" for r in b.get("/snapshot").json()["records"]),
        "B to be loading the session",
    )
    assert b.proc is not None
    b.proc.send_signal(signal.SIGKILL)  # the namespace's first process: every process of B goes
    b.stop()
    thread.join(60)
    assert answered["status"] == 502, answered
    assert answered["body"]["code"] == "peer_unreachable"
    kept = record(a, key)
    assert (kept["liveness"], kept["ended_reason"]) == ("suspended", None)
    assert "the handoff to n2 failed" in kept["error_reason"]
    assert turn(a, key, "HISTORY")["recap"] == "history: 1 turns; last: before the cut"


def test_the_origin_killed_mid_handoff_keeps_it_marked_until_the_handoff_is_run_again(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    b.stop()
    b.extra_env["FAKE_ACP_LOAD_DELAY"] = "3"
    b.start()
    a.hears("n2")
    key = start(a, project)
    session_id = turn(a, key, "before the cut")["session_id"]

    def hand() -> None:
        with contextlib.suppress(httpx.TransportError):  # the daemon it asked is killed mid-answer
            a.post(f"/sessions/{key}/handoff", {"to": "n2"}, timeout=30)

    thread = threading.Thread(target=hand)
    thread.start()
    b.wait_for(
        lambda: any(r.get("lane") == "headless" for r in b.get("/snapshot").json()["records"]),
        "B to be loading the session",
    )
    assert a.proc is not None
    a.proc.send_signal(signal.SIGKILL)
    a.stop()
    thread.join(30)

    def copies() -> list[dict[str, Any]]:
        return [r for r in b.get("/snapshot").json()["records"] if r.get("session_id") == session_id]

    # B opened it, found its origin gone before its answer went out, and dropped its copy.
    dropped = b.wait_for(lambda: [r for r in copies() if r["liveness"] == "ended"], "B to drop its copy")
    assert [r["ended_reason"] for r in dropped] == ["exit"]
    assert [r for r in copies() if r["liveness"] != "ended"] == []
    a.start()
    kept = record(a, key)
    assert kept["liveness"] == "suspended"
    refused = a.post(f"/sessions/{key}/prompt", {"text": "on A again?"})
    assert (refused.status_code, refused.json()["code"]) == (409, "handing_off"), refused.text
    assert f"rosterd handoff {key} --to n2" in refused.json()["error"]
    settled = a.post(f"/sessions/{key}/handoff", {"to": "n2"})
    assert settled.status_code == 201, settled.text
    there = settled.json()["there"]["session_key"]
    assert record(a, key)["ended_reason"] == "handed_off"
    assert [r["session_key"] for r in copies() if r["liveness"] != "ended"] == [there]  # one, never two
    assert turn(b, there, "HISTORY")["recap"] == "history: 1 turns; last: before the cut"


def test_a_target_whose_origin_hung_up_drops_what_it_took_in(pair: tuple[SwarmNode, SwarmNode, Path]) -> None:
    """The origin gave up waiting (here: a member's signed request with a short timeout), so it
    keeps its copy: the target drops the one it opened, and says so in its log."""
    a, b, project = pair
    b.stop()
    b.extra_env["FAKE_ACP_LOAD_DELAY"] = "2"
    b.start()
    bundle = {
        "version": 1,
        "harness": "fake",
        "adapter": [],
        "session_id": "sess-from-afar",
        "cwd": str(project),
        "name": None,
        "policy": "attention",
        "model": None,
        "effort": None,
        "recap": True,
        "origin": f"{a.identity().node_id}:1:1",
        "files": [],
    }
    body = canonical.encode(bundle)
    peer = Peer(a.identity(), a.swarm_key(), [b.identity().certificate()])
    with (
        httpx.Client(verify=peer.context, timeout=0.5, trust_env=False) as client,
        contextlib.suppress(httpx.TimeoutException),
    ):
        client.post(
            f"https://{b.address}/swarm/handoff",
            content=body,
            headers=peer.headers("POST", "/swarm/handoff", body, to=b.identity().node_id),
        )
        raise AssertionError("B answered before its adapter loaded the session")

    def copies() -> list[dict[str, Any]]:
        return [r for r in b.get("/snapshot").json()["records"] if r.get("session_id") == "sess-from-afar"]

    b.wait_for(
        lambda: copies() and all(r["liveness"] == "ended" for r in copies()), "B to drop it", timeout=20
    )
    assert "the origin did not get the answer" in b.log.read_text()


def test_a_handoff_asked_on_another_node_is_done_by_the_owner(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    key = start(a, project)
    turn(a, key, "asked from afar")
    done = b.rosterd("handoff", key, "--to", "n2")  # proxied to A, the owner, which hands it to B
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{key}: handed off to n2 as {b.identity().node_id}:")
    there = record(a, key)["handed_to"]["session_key"]
    assert turn(b, there, "HISTORY")["recap"] == "history: 1 turns; last: asked from afar"
    entries = [e for e in a.get("/journal").json()["entries"] if e.get("session_key") == key]
    assert any(e.get("through") == "n2" for e in entries), entries


def test_a_handoff_to_a_name_two_nodes_share_lists_both_and_nothing_moves(network: Network) -> None:
    """Not ``no node 'charlie'``: the candidates, as an ambiguous session name lists them,
    and the session is left as it was (issue 33: also seen)."""
    with tempfile.TemporaryDirectory(prefix="rh", dir="/tmp") as short:
        root = Path(short)
        project = root / "project"
        project.mkdir()

        def prepare(node: SwarmNode) -> None:
            if node.root.name == "n1":
                node.settings = {"harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"}}
                node.extra_env = {"FAKE_ACP_STATE": str(node.root / "home" / ".fake-acp")}
                (node.root / "home" / ".fake-acp").mkdir()
                (node.config_dir / "agents").mkdir(parents=True)
                (node.config_dir / "agents" / "fake.toml").write_text(FAKE_MANIFEST)
            else:
                node.name = "charlie"

        a, b, c = make(network, root, 3, prepare)
        try:
            for node in (b, c):
                node.ok("join", a.address, "--token", a.ok("invite").strip())
            key = start(a, project)
            turn(a, key, "the only words")
            done = a.rosterd("handoff", key, "--to", "charlie")
            assert done.returncode == 1, done.stderr
            ids = sorted(node.identity().node_id for node in (b, c))
            assert (
                f"2 nodes go by the name 'charlie' ({ids[0]}, {ids[1]}): name one by its node id"
                in done.stderr
            )
            assert all(f"  {ident}\n" in done.stderr for ident in ids)  # the candidates, one a line
            kept = record(a, key)
            assert (kept["liveness"], kept["error_reason"]) == ("live", None)
            for node in (b, c):
                assert [
                    r for r in node.get("/snapshot").json()["records"] if r.get("lane") == "headless"
                ] == []
        finally:
            for node in (a, b, c):
                node.stop()
