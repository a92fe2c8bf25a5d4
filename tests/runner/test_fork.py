"""Forking a headless session (``POST /sessions/{key}/fork``, ``rosterd fork``, MCP's
``session.fork``): a new session on a holder of its own whose adapter's ``session/fork`` starts
from the source's history, the source going on alone; and each refusal, before anything starts.

The fake ACP adapter keeps each session's history in a file of its own (``$FAKE_ACP_STATE``),
copies it on ``session/fork`` and answers ``HISTORY`` with what its session holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.roost.test_worktrees import git
from tests.conftest import BIN
from tests.mcpserver.client import ok, refused, unix
from tests.runner.conftest import ADAPTER, Headless, sessions

NO_TURN = "history: 0 turns; last: None"


def reply(headless: Headless, key: str, text: str) -> str:
    answer = headless.prompt(key, text, wait="idle")
    assert answer.status_code == 200, answer.text
    return answer.json()["record"]["recap"]


def fork(headless: Headless, key: str, **body: object) -> dict:
    answer = headless.post(f"/sessions/{key}/fork", body, timeout=60)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_a_fork_starts_from_the_sources_history_and_each_goes_on_alone(headless: Headless) -> None:
    headless.daemon.start()
    source = headless.start(name="tests: source", policy="auto")
    key = source["session_key"]
    assert reply(headless, key, "remember the heron") == "echo: remember the heron"

    forked = fork(headless, key, name="tests: idea b")

    assert list(forked) == [
        "lane", "source", "forked_from", "harness", "name", "pane", "record", "session_id", "cwd",
        "worktree", "branch",
    ]  # fmt: skip
    record = forked["record"]
    assert (forked["lane"], forked["source"], forked["forked_from"], forked["harness"]) == (
        "headless",
        key,
        source["session_id"],
        "fake",
    )
    assert (forked["name"], forked["pane"], forked["worktree"], forked["branch"]) == (
        "tests: idea b",
        None,
        None,
        None,
    )
    assert (
        record["session_key"] != key and record["session_id"] == forked["session_id"] != source["session_id"]
    )
    # The history the adapter replayed as it forked is not news: the fork is idle, not working.
    assert (record["activity"], record["activity_event"], record["lane"]) == (
        "idle",
        "session_forked",
        "headless",
    )
    assert (record["name"], record["permission_policy"], record["cwd"]) == (
        "tests: idea b",
        "auto",
        source["cwd"],
    )
    assert reply(headless, record["session_key"], "HISTORY") == "history: 1 turns; last: remember the heron"
    assert reply(headless, key, "and the otter") == "echo: and the otter"
    assert reply(headless, key, "HISTORY") == "history: 2 turns; last: and the otter"
    assert reply(headless, record["session_key"], "HISTORY") == "history: 2 turns; last: HISTORY"
    assert {r["session_key"] for r in sessions(headless)} == {key, record["session_key"]}


def test_a_fork_in_a_worktree_runs_where_its_source_runs_in_the_repository(headless: Headless) -> None:
    root = headless.daemon.roost.root
    repo = root / "app"
    env = {**headless.daemon.roost.env, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('hi')\n")
    git(repo, "add", ".")
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            "s",
        ],
        check=True,
        env=env,
    )
    headless.daemon.start()
    key = headless.start(cwd=str(repo / "src"))["session_key"]
    reply(headless, key, "remember the heron")

    forked = fork(headless, key, name="idea-b", worktree=True, branch="try/b")

    place = root / "app.worktrees" / "idea-b"
    assert (forked["worktree"], forked["branch"], forked["cwd"]) == (str(place), "try/b", str(place / "src"))
    assert forked["record"]["cwd"] == str(place / "src")
    assert reply(headless, forked["record"]["session_key"], "WHERE") == f"cwd: {place / 'src'}"
    assert reply(headless, key, "WHERE") == f"cwd: {repo / 'src'}"
    assert git(place, "rev-parse", "--abbrev-ref", "HEAD") == "try/b"


def test_rosterd_fork_says_where_the_fork_runs(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="source")["session_key"]
    reply(headless, key, "remember the heron")
    done = subprocess.run(
        [str(BIN / "rosterd"), "fork", key, "idea", "--json"],
        capture_output=True,
        text=True,
        env=headless.daemon.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    forked = json.loads(done.stdout)
    assert forked["name"] == "idea" and forked["record"]["name"] == "idea"
    plain = subprocess.run(
        [str(BIN / "rosterd"), "fork", key, "idea two"],
        capture_output=True,
        text=True,
        env=headless.daemon.env,
        timeout=120,
    )
    assert plain.returncode == 0, plain.stderr
    [new] = [r["session_key"] for r in sessions(headless) if r["name"] == "idea two"]
    assert plain.stdout == f"{key}: forked as idea two, {new}\n"


@pytest.fixture
def kept(headless: Headless) -> Headless:
    """The fake harness with a manifest naming where it keeps a conversation (the adapter's
    history files), so a session that has had no turn yet has none."""
    agents = headless.daemon.roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    command = json.dumps([sys.executable, str(ADAPTER)])
    relative = Path("..") / headless.state.name / "{session_id}.json"
    (agents / "fake.toml").write_text(
        f'[hook]\nkind = "none"\n[acp]\ncommand = {command}\ntranscripts = [{json.dumps(str(relative))}]\n'
    )
    return headless


def test_each_refusal_starts_nothing(kept: Headless, tmp_path: Path) -> None:
    headless = kept
    headless.daemon.start()
    quiet = headless.start(name="quiet")["session_key"]
    talked = headless.start(name="talked")["session_key"]
    reply(headless, talked, "remember the heron")
    before = {r["session_key"] for r in sessions(headless)}
    holders = sorted(headless.holder_pids())

    def refusal(key: str, status: int, **body: object) -> dict:
        answer = headless.post(f"/sessions/{key}/fork", body, timeout=60)
        assert answer.status_code == status, answer.text
        return answer.json()

    assert refusal(quiet, 409, name="a")["code"] == "no_conversation"
    assert refusal(talked, 409, name="quiet")["code"] == "name_taken"
    assert "git repository" in refusal(talked, 400, name="b", worktree=True)["error"]
    assert "branch goes with worktree" in refusal(talked, 400, name="b", branch="x")["error"]
    assert refusal("nosuch", 404, name="c")["error"]
    assert refusal(talked, 400, name="a\nb")["field"] == "name"
    assert {r["session_key"] for r in sessions(headless)} == before
    assert sorted(headless.holder_pids()) == holders
    assert not list(headless.daemon.roost.root.glob("*.worktrees"))


def test_an_adapter_that_offers_no_fork_is_refused_before_anything_starts(headless: Headless) -> None:
    headless.daemon.roost.env["FAKE_ACP_NO_FORK"] = "1"
    headless.daemon.start()
    key = headless.start()["session_key"]
    reply(headless, key, "remember the heron")
    holders = sorted(headless.holder_pids())
    answer = headless.post(f"/sessions/{key}/fork", {"name": "idea"})
    assert answer.status_code == 409, answer.text
    assert answer.json() == {
        "error": "fake's ACP adapter (fake-acp 1.0.0) offers no session/fork: "
        "a session of it cannot be forked",
        "code": "cannot_fork",
    }
    assert [r["session_key"] for r in sessions(headless)] == [key]
    assert sorted(headless.holder_pids()) == holders


def test_a_suspended_sources_adapter_is_asked_and_a_refusal_leaves_no_session(headless: Headless) -> None:
    headless.daemon.roost.env["FAKE_ACP_NO_FORK"] = "1"
    headless.daemon.start()
    key = headless.start()["session_key"]
    reply(headless, key, "remember the heron")
    assert headless.post(f"/sessions/{key}/suspend").status_code == 200
    answer = headless.post(f"/sessions/{key}/fork", {"name": "idea"}, timeout=60)
    assert answer.status_code == 409 and answer.json()["code"] == "cannot_fork", answer.text
    live = [r["session_key"] for r in sessions(headless) if r["liveness"] != "ended"]
    assert live == [key]
    assert headless.record(key)["liveness"] == "suspended"


def test_mcp_forks_under_the_stricter_policy_and_says_where(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="tests: auto", policy="auto")["session_key"]
    reply(headless, key, "remember the heron")
    mcp = unix(headless.daemon)
    forked = ok(mcp, "session.fork", name="tests: auto", new_name="tests: mcp fork")
    record = forked["record"]
    # The test is in no session: it counts as attention, stricter than the source's auto.
    assert (forked["lane"], record["permission_policy"], record["name"]) == (
        "headless",
        "attention",
        "tests: mcp fork",
    )
    assert reply(headless, record["session_key"], "HISTORY") == "history: 1 turns; last: remember the heron"
    taken = refused(unix(headless.daemon), "session.fork", name=key, new_name="tests: auto")
    assert (taken["status"], taken["code"]) == (409, "name_taken")
