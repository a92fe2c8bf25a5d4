"""A real Claude Code (hooks and permission gate installed) on one node, driven, read and
answered from another node's CLI, API, MCP and web app (Chromium in that node's namespace);
and the specification's approval workflow
(``examples/approve_push.py``, written against ``/swarm/changes``, ``GET /sessions/{key}`` and
the permission POST of one node) answering that Claude's requests on the other.

Claude runs in node ``n1``'s namespaces, started by its daemon's launcher, and talks to a fake
Anthropic API the test serves on the bridge's own address (the only other machine n1 can
reach). The sibling test session the workflow consults is a headless session on ``n2``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, TURN_TIMEOUT, claude_home
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.model_api import Step, ToolCall, default_script, reply_for
from tests.mcpserver.client import ok
from tests.mesh.swarmnodes import SwarmNode, make
from tests.mesh.test_nodes_acts import journal, mcp
from tests.nodes import Network
from tests.runner.conftest import ADAPTER
from tests.web.conftest import chromium_in
from tests.web.test_swarm_web import WAIT_MS, logged_in

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "examples" / "approve_push.py"
GIT = ("git", "-c", "user.name=Roost Tests", "-c", "user.email=tests@roost.invalid")


def script(prompt: str) -> Step:
    """``PUSH`` asks to run ``git push origin main``; the rest as every agent test's model."""
    if "PUSH" in prompt:
        return ToolCall("git push origin main", then=f"PUSHED:{reply_for(prompt)}")
    return default_script(prompt)


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def pushed(remote: Path) -> str | None:
    """The commit ``main`` names in the bare remote, None before the first push."""
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", "main"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout.strip() or None


@pytest.fixture
def claude_nodes(
    network: Network, agent_bin: Path
) -> Iterator[tuple[SwarmNode, SwarmNode, AnthropicAPI, Path]]:
    """``n1`` with Claude's hooks and gate installed and ``claude`` on its daemon's PATH, ``n2``
    with the fake ACP adapter, joined; and a git project (with a bare remote beside it) for
    Claude to work in. Homes are under a short path (holder sockets must fit ``sun_path``)."""
    api = AnthropicAPI(script=script, host=f"100.64.{network.subnet}.1")
    with tempfile.TemporaryDirectory(prefix="rc", dir="/tmp") as short:
        root = Path(short)
        project, remote = root / "project", root / "remote.git"
        project.mkdir()
        git("init", "-q", "-b", "main", cwd=project)
        git("commit", "-q", "--allow-empty", "-m", "first", cwd=project)
        git("init", "-q", "--bare", str(remote), cwd=root)
        git("remote", "add", "origin", str(remote), cwd=project)

        def prepare(node: SwarmNode) -> None:
            if node.name == "n1":
                claude_home(node.root / "home", project)
                (node.root / "bin" / "claude").symlink_to(agent_bin / "claude")
                node.extra_env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}
                node.settings = {"harness.claude": {"gate_timeout_s": 3600}}
            else:
                node.settings = {"harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"}}

        a, b = make(network, root, 2, prepare)
        try:
            a.ok("integrate", "install", "claude", "--gate")
            b.ok("join", a.address, "--token", a.ok("invite").strip())
            yield a, b, api, project
        finally:
            for node in (a, b):
                node.stop()
            api.close()


def launch_claude(a: SwarmNode, b: SwarmNode, project: Path) -> str:
    """Claude started by ``a``'s launcher, idle at its prompt with its SessionStart heard, and
    seen in ``b``'s union: its session key."""
    answer = a.post("/launch", {"agent": "claude", "cwd": str(project), "name": "pusher"})
    assert answer.status_code == 201, answer.text

    def ready() -> dict[str, Any] | None:
        for record in a.get("/snapshot").json()["records"]:
            heard = "hook" in record.get("sources", ())
            if record.get("harness") == "claude" and record.get("activity") == "idle" and heard:
                return record
        return None

    try:
        key = str(a.wait_for(ready, "Claude idle with its hooks heard", timeout=60)["session_key"])
    except AssertionError as error:
        records = a.get("/snapshot").json()["records"]
        raise AssertionError(f"{error}: {records}\n{a.log.read_text()}") from None
    b.wait_for(lambda: remote_record(b, key), "Claude in n2's union")
    return key


def remote_record(node: SwarmNode, key: str) -> dict[str, Any] | None:
    found = node.get("/swarm/snapshot").json()["records"]
    return next((record for record in found if record["session_key"] == key), None)


def pending_on(node: SwarmNode, key: str) -> dict[str, Any] | None:
    """The request ``key`` waits on, as ``node`` serves it, once it can be answered."""
    pending = node.get(f"/sessions/{key}").json().get("pending") or {}
    return pending if pending.get("answerable") else None


def prompt(node: SwarmNode, key: str, text: str, wait: bool = False) -> None:
    """A terminal's prompt from ``node``, fenced to the row it read, as a script sends one; with
    ``wait``, answered once the turn is idle."""
    for _ in range(5):  # the row moved on between the read and the prompt: read it again
        record = node.get(f"/sessions/{key}").json()
        body: dict[str, Any] = {
            "text": text,
            **{f: record[f] for f in ("status_epoch", "occupant_id", "revision")},
        }
        if wait:
            body.update(wait={"until": ["idle"]}, deadline_ms=int((time.time() + TURN_TIMEOUT) * 1000))
        sent = node.post(f"/sessions/{key}/prompt", body, timeout=TURN_TIMEOUT + 10)
        if sent.status_code != 409 or sent.json().get("code") != "revision_changed":
            break
        time.sleep(0.2)
    assert sent.status_code == 200, sent.text
    answer = sent.json()
    assert answer["input"] == "accepted" and answer["written_bytes"] > len(text), answer
    assert not wait or answer["wait"]["outcome"] == "matched", answer


def idle_with(node: SwarmNode, key: str, recap: str) -> bool:
    record = node.get(f"/sessions/{key}").json()
    return record.get("activity") == "idle" and recap in (record.get("recap") or "")


def test_a_real_claude_on_one_node_is_driven_read_and_answered_from_another(
    claude_nodes: tuple[SwarmNode, SwarmNode, AnthropicAPI, Path],
) -> None:
    a, b, api, project = claude_nodes
    key = launch_claude(a, b, project)
    listed = b.ok("list", "--swarm", "--json")
    assert key in listed and '"n1"' in listed

    # the API: a fenced prompt typed into the pane on n1, answered once the turn is idle
    prompt(b, key, "hello from n2", wait=True)
    b.wait_for(
        lambda: idle_with(b, key, "REPLY:"), "the reply kept on n1, read from n2", timeout=TURN_TIMEOUT
    )
    assert reply_for("hello from n2").splitlines()[0] in b.ok("read", key)

    # a permission from the CLI on n2: Claude's gate holds the request on n1 until it is answered
    prompt(b, key, "please run TOOL")
    held = b.wait_for(lambda: pending_on(b, key), "Claude's request seen from n2", timeout=TURN_TIMEOUT)
    assert (held["tool"], held["summary"]) == ("Bash", "Bash: touch x")
    assert b.rosterd("allow", key).returncode == 0
    b.wait_for(lambda: (project / "x").exists(), "the tool to run on n1", timeout=TURN_TIMEOUT)
    b.wait_for(lambda: idle_with(b, key, "TOOL-DONE:"), "the turn done", timeout=TURN_TIMEOUT)

    # MCP on n2: by name, anywhere in the swarm, with a wait; the recap read back
    done = ok(
        mcp(b), "session.send", name="pusher", prompt="from mcp", wait_until="idle", timeout_s=TURN_TIMEOUT
    )
    assert done["wait"]["reached"] is True, done
    state = ok(mcp(b), "session.read_state", name="pusher")
    assert state["session_key"] == key and reply_for("from mcp").splitlines()[0] in state["recap"]

    answers = [line for line in journal(a) if line["kind"] == "answer"]
    assert [(line["answer"], line["through"]) for line in answers] == [("allow", "n2")]
    assert reply_for("hello from n2") in api.streamed  # the model on the bridge answered n1's Claude


def test_the_approval_workflow_on_one_node_answers_a_real_claude_on_another(
    claude_nodes: tuple[SwarmNode, SwarmNode, AnthropicAPI, Path],
) -> None:
    a, b, _, project = claude_nodes
    remote = project.parent / "remote.git"
    key = launch_claude(a, b, project)
    sibling = b.post("/sessions", {"harness": "fake", "cwd": str(project.parent), "name": "tests-pusher"})
    assert sibling.status_code == 201, sibling.text
    tests = sibling.json()["record"]["session_key"]
    assert (
        b.post(f"/sessions/{tests}/prompt", {"text": "all 12 tests passed", "wait": "idle"}).status_code
        == 200
    )
    workflow = subprocess.Popen(
        [sys.executable, str(WORKFLOW), str(b.socket)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1)  # the workflow is following /swarm/changes
        assert workflow.poll() is None, workflow.communicate()

        # green tests: the push is allowed and reaches the remote
        prompt(b, key, "PUSH it")
        b.wait_for(
            lambda: pushed(remote) == git("rev-parse", "HEAD", cwd=project), "the push", timeout=TURN_TIMEOUT
        )
        b.wait_for(lambda: idle_with(b, key, "PUSHED:"), "the turn done", timeout=TURN_TIMEOUT)

        # red tests: the next push is refused, nothing reaches the remote
        before = pushed(remote)
        git("commit", "-q", "--allow-empty", "-m", "second", cwd=project)
        red = {"text": "2 tests failed", "wait": "idle"}
        assert b.post(f"/sessions/{tests}/prompt", red).status_code == 200
        prompt(b, key, "PUSH again")
        b.wait_for(
            lambda: [line for line in journal(a) if line["kind"] == "answer"][1:],
            "the second answer",
            timeout=TURN_TIMEOUT,
        )
        b.wait_for(
            lambda: b.get(f"/sessions/{key}").json()["activity"] == "idle", "the turn over", timeout=60
        )
        assert pushed(remote) == before

        # anything else is a person's to answer: the workflow leaves it pending
        prompt(b, key, "please run TOOL")
        b.wait_for(lambda: pending_on(b, key), "a request that is not a push", timeout=TURN_TIMEOUT)
        time.sleep(2)
        assert pending_on(b, key) is not None and not (project / "x").exists()
        assert b.rosterd("deny", key, "--reason", "not today").returncode == 0
    except AssertionError as error:
        workflow.terminate()
        out, err = workflow.communicate(timeout=10)
        record = b.get(f"/sessions/{key}").json()
        raise AssertionError(f"{error}\nworkflow said: {out!r} {err!r}\nClaude's record: {record}") from None
    finally:
        workflow.terminate()
        out, err = workflow.communicate(timeout=10)
    assert out.splitlines() == [f"{key} allow 200", f"{key} reject 200"], (out, err)
    answers = [(line["answer"], line["through"]) for line in journal(a) if line["kind"] == "answer"]
    assert answers == [("allow", "n2"), ("reject", "n2"), ("reject", "n2")]


@pytest.fixture
def browser_on_n2(claude_nodes: tuple[SwarmNode, SwarmNode, AnthropicAPI, Path]) -> Iterator[Any]:
    """Chromium in n2's network namespace, where n2's loopback listener (its web app) is."""
    _, b, _, project = claude_nodes
    with chromium_in(b.node.namespace, project.parent) as launched:
        yield launched


def test_a_real_claudes_request_on_one_node_is_answered_in_the_web_app_of_another(
    claude_nodes: tuple[SwarmNode, SwarmNode, AnthropicAPI, Path], browser_on_n2: Any
) -> None:
    a, b, _, project = claude_nodes
    key = launch_claude(a, b, project)
    page, errors = logged_in(browser_on_n2, b, {"width": 1200, "height": 760})
    far = remote_record(b, key) or {}
    shown = f"{far['node_id']}/{far['tmux']['pane']}"  # another node's pane: its terminal's row
    row = page.locator(f'.node-group[data-node="n1"] li.session[data-session="{shown}"]')
    row.wait_for(timeout=WAIT_MS)
    prompt(b, key, "please run TOOL")
    allow = row.locator('.request button[data-answer="allow"]')
    allow.wait_for(timeout=TURN_TIMEOUT * 1000)
    assert "Bash: touch x" in row.locator(".request").inner_text()
    allow.click()
    b.wait_for(lambda: (project / "x").exists(), "the tool to run on n1", timeout=TURN_TIMEOUT)
    row.locator(".request").wait_for(state="detached", timeout=WAIT_MS)
    answers = [line for line in journal(a) if line["kind"] == "answer"]
    assert [(line["answer"], line["via"], line["through"]) for line in answers] == [("allow", "web", "n2")]

    # Claude's own screen, through n2's relay of the terminal's WebSocket
    row.click()
    view = page.locator(f'.view[data-session="{shown}"]')
    view.locator(".xterm-rows").get_by_text("TOOL-DONE:").first.wait_for(timeout=TURN_TIMEOUT * 1000)
    assert view.get_attribute("data-state") == "open"
    page.context.close()
    assert not errors, errors
