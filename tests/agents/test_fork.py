"""Forking real agents against the fake model APIs: a fork answers a ``RECALL`` of its source's
earlier turn (the fake model answers it with the prompts its request carries), in its own git
worktree, while the source goes on with turns the fork never sees.

Claude Code in a pane is forked by ``roost fork`` (its manifest's ``--resume ID --fork-session
--session-id NEW``) and by the web app's ⑂ in Chromium; Claude's and Codex's ACP adapters fork
headless sessions through ``session/fork``.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agents.conftest import (
    API_KEY,
    CLAUDE_QUIET,
    START_TIMEOUT,
    TIMINGS,
    TURN_TIMEOUT,
    AgentPane,
    _stop_strays,
    transcript_settled,
)
from tests.agents.test_headless_acp import Real, real
from tests.agents.test_matrix import ROWS, Matrix, launch, rosterd
from tests.cli.roost.test_worktrees import git
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.anthropic_api import typed
from tests.fakes.model_api import recalled, reply_for
from tests.recorder import APIS, prepare, script
from tests.web.conftest import Web, chromium, page
from tests.web.test_browser import log_in

__all__ = ["chromium", "daemon", "page", "real", "rosterd"]

pytestmark = pytest.mark.agent

FIRST = "remember the word heron"
RECALL = "RECALL what I asked you to remember"
LATER = "SLOW and now the otter"


def repository(roost: Roost, folder: Path) -> None:
    """``folder`` made a git repository with one commit, the sandbox's git identity its own."""
    roost.env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    who = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    (folder / "README").write_text("the project\n")
    for args in (("init", "-q", "-b", "main"), ("add", "."), (*who, "commit", "-qm", "start")):
        subprocess.run(["git", "-C", str(folder), *args], check=True, env=roost.env, capture_output=True)


def sent(roost: Roost, target: str, text: str) -> None:
    done = roost.run("send", target, text)
    assert done.returncode == 0, done.stderr


def asked(agent: AgentPane, text: str) -> list[dict[str, Any]]:
    """The conversation requests (they carry tools) whose newest prompt is ``text``."""
    return [r.body for r in agent.api.requests if r.body.get("tools") and typed(r.body)[-1:] == [text]]


@pytest.mark.parametrize("claude_trusts", [("project.worktrees/idea-b",)])
def test_a_forked_claude_recalls_its_sources_turn_in_its_own_worktree_while_the_source_goes_on(
    roost: Roost, claude: AgentPane
) -> None:
    repository(roost, claude.project)
    # Claude names its transcript as it starts and writes it at the first prompt: before that
    # there is no conversation to fork, and nothing is made.
    early = roost.run("fork", "claude", "too-early")
    assert early.returncode == 1 and "has no conversation yet" in early.stderr, early.stderr
    sent(roost, "claude", FIRST)
    claude.wait_state("done")
    transcript = Path(roost.option(claude.pane, "@roost-transcript-path"))
    kept = transcript_settled(transcript)
    roost.env.update(ANTHROPIC_API_KEY=API_KEY, **CLAUDE_QUIET)  # keys come from the caller, never a record

    began = time.monotonic()
    doc = roost.json("fork", "--worktree", "--json", "claude", "idea-b")

    worktree = roost.root / "project.worktrees" / "idea-b"
    assert (doc["worktree"], doc["branch"], doc["cwd"]) == (str(worktree), "idea-b", str(worktree))
    assert (doc["harness"], doc["forked_from"]) == ("claude", roost.option(claude.pane, "@roost-session-id"))
    fork = AgentPane(roost, "idea-b", doc["pane"], worktree, claude.api)
    fork.wait(
        lambda: "? for shortcuts" in fork.screen() and roost.option(fork.pane, "@roost-cwd") == str(worktree),
        START_TIMEOUT,
        "the fork's prompt and its SessionStart hook",
    )
    fork.timed("roost fork --worktree to the fork's prompt", time.monotonic() - began)
    # Its own session, under the id roost chose, as its hook says; the source's file as it was.
    assert roost.option(fork.pane, "@roost-session-id") == doc["session_id"] != doc["forked_from"]
    now = transcript.read_bytes()
    assert now == kept, (now[len(kept) :] if now.startswith(kept) else now)[:3000]

    sent(roost, "claude", LATER)  # a slow turn: the source is working while the fork answers
    sent(roost, "idea-b", RECALL)
    fork.wait_state("done")
    claude.wait_state("done")

    read = roost.run("read", "idea-b")
    assert (read.returncode, read.stdout) == (0, recalled([FIRST]))
    assert roost.run("read", "claude").stdout == reply_for(LATER)
    [recall] = asked(fork, RECALL)
    assert str(worktree) in json.dumps(recall), json.dumps(recall)[-3000:]  # it works in its worktree
    assert LATER not in json.dumps(recall)
    [later] = asked(claude, LATER)
    assert RECALL not in json.dumps(later) and FIRST in json.dumps(later)
    assert str(worktree) not in json.dumps(later)
    # Claude keeps the fork's conversation under the worktree's project folder (every character
    # of its path but letters and digits made "-"), the source's where it was.
    projects = Path(roost.env["HOME"]) / ".claude" / "projects"
    [kept_at] = projects.glob(f"*/{doc['session_id']}.jsonl")
    assert kept_at.parent.name == re.sub("[^A-Za-z0-9]", "-", str(worktree))
    assert transcript.parent.name == re.sub("[^A-Za-z0-9]", "-", str(claude.project))
    assert git(worktree, "rev-parse", "--abbrev-ref", "HEAD") == "idea-b"
    forked = [p for p in roost.json("status", "--json")["panes"] if p["id"] == fork.pane]
    assert [(p["worktree"], p["branch"], p["session_id"]) for p in forked] == [
        (str(worktree), "idea-b", doc["session_id"])
    ]


def test_a_headless_fork_recalls_its_sources_turn_in_its_own_worktree(real: Real) -> None:
    repository(real.headless.daemon.roost, real.project)
    real.headless.daemon.start()
    key = real.start(name=f"tests: {real.harness}")["session_key"]
    real.turn(key, FIRST)

    began = time.monotonic()
    answer = real.headless.post(f"/sessions/{key}/fork", {"name": "idea-b", "worktree": True}, timeout=120)
    assert answer.status_code == 201, answer.text
    TIMINGS.append(f"{real.harness}-acp: fork --worktree to idle {time.monotonic() - began:.2f}s")
    forked = answer.json()
    worktree = real.project.parent / "project.worktrees" / "idea-b"
    record = forked["record"]
    assert (record["cwd"], record["activity"], record["activity_event"]) == (
        str(worktree),
        "idle",
        "session_forked",
    )
    assert record["session_id"] != forked["forked_from"]

    assert real.prompt(key, LATER)["input"] == "accepted"  # the source works while the fork answers
    assert real.turn(record["session_key"], RECALL)["recap"] == recalled([FIRST])
    assert real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")["recap"] == reply_for(LATER)
    assert real.turn(key, RECALL)["recap"] == recalled([FIRST, LATER])
    assert real.turn(record["session_key"], "RECALL again")["recap"] == recalled([FIRST, RECALL])


def test_the_web_apps_fork_opens_a_claude_that_recalls_its_sources_turn(
    roost: Roost, web: Web, claude: AgentPane, page: Any
) -> None:
    # The daemon's fork takes what a new pane gets: the server's environment, where a person's
    # login would have put the key.
    for name, value in {"ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}.items():
        roost.tmux("set-environment", "-g", name, value)
    sent(roost, "claude", FIRST)
    claude.wait_state("done")
    log_in(page, web)
    page.click(f'li.session[data-pane="{claude.pane}"]')
    tab = f'.tab[data-pane="{claude.pane}"]'
    page.click(f"{tab} button.fork")
    page.wait_for_selector("dialog#fork[open]")
    page.fill("#fork-name", "idea-b")
    page.click("#fork-go")
    page.wait_for_selector("dialog#fork", state="hidden")
    [pane] = [p for p in roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split() if p != claude.pane]
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    fork = AgentPane(roost, "idea-b", pane, claude.project, claude.api)
    fork.wait(lambda: "? for shortcuts" in fork.screen(), START_TIMEOUT, "the fork's prompt")
    page.wait_for_selector(f'.view[data-pane="{pane}"] .xterm-rows:has-text("for shortcuts")')
    sent(roost, "idea-b", RECALL)
    fork.wait_state("done")
    assert roost.run("read", "idea-b").stdout == recalled([FIRST])


@pytest.mark.parametrize("agent_flags", [("--model", "gpt-forked")])
def test_a_forked_codex_recalls_its_sources_turn_with_its_flags(roost: Roost, codex: AgentPane) -> None:
    sent(roost, "codex", FIRST)
    codex.wait_state("done")
    source = roost.option(codex.pane, "@roost-session-id")

    doc = roost.json("fork", "--json", "codex", "idea-b")

    assert (doc["harness"], doc["forked_from"], doc["session_id"]) == ("codex", source, None)
    fork = AgentPane(roost, "idea-b", doc["pane"], codex.project, codex.api)
    fork.wait(lambda: "? for shortcuts" in fork.screen(), START_TIMEOUT, "the fork's prompt")
    sent(roost, "idea-b", RECALL)
    fork.wait_state("done")
    assert roost.run("read", "idea-b").stdout == recalled([FIRST])
    assert roost.option(fork.pane, "@roost-session-id") not in ("", source)  # its own, as its hooks say
    [recall] = [
        r.body for r in codex.api.requests if r.body.get("tools") and RECALL in json.dumps(r.body["input"])
    ]
    assert recall.get("model") == "gpt-forked"  # started as its source was
    sent(roost, "codex", "RECALL in the source")
    codex.wait_state("done")
    assert roost.run("read", "codex").stdout == recalled([FIRST])


@pytest.mark.parametrize("name", ["opencode", "pi"])
def test_a_forked_opencode_or_pi_recalls_its_sources_turn(
    name: str, roost: Roost, rosterd: tuple[Daemon, httpx.Client], agent_bin: Path
) -> None:
    """Started from their recipes as the matrix starts them, with roost's integration."""
    recipe = ROWS[name]
    api = APIS[recipe.get("api", "anthropic")](script=script(recipe.get("tool", "Bash")))
    try:
        agent = launch(roost, *rosterd, name, True, api, agent_bin)
        try:
            agent.send(FIRST)
            agent.until_idle(1)
            agent.wait(lambda: roost.option(agent.pane, "@roost-session-id"), "the source's session id")
            # The fork runs in the caller's environment: a person's, where the agent's settings are.
            home, config = Path(roost.env["HOME"]), Path(roost.env["XDG_CONFIG_HOME"])
            roost.env.update(prepare(recipe, api.url, home, config, agent.project, roost.env["PATH"]))

            doc = roost.json("fork", "--json", agent.pane, "idea-b")

            fork = Matrix(roost, *rosterd, name, recipe, True, doc["pane"], agent.project, api)
            trust, idle = "trust", recipe["matrix"]["idle"]
            fork.wait(lambda: re.search(f"{idle}|{trust}", fork.screen()), "the fork's prompt", START_TIMEOUT)
            if re.search(trust, fork.screen()) and not re.search(idle, fork.screen()):
                time.sleep(1)  # as a person pauses before answering
                roost.tmux("send-keys", "-t", fork.pane, "Enter")
                fork.wait(lambda: re.search(idle, fork.screen()), "the fork's prompt", START_TIMEOUT)
            # Each shows the conversation it was forked from before it takes a prompt.
            fork.wait(lambda: reply_for(FIRST).splitlines()[0] in fork.screen(), "the history", START_TIMEOUT)
            fork.send(RECALL)
            fork.wait(lambda: recalled([FIRST]) in api.streamed, "the fork's RECALL answered")
            fork.wait(
                lambda: roost.option(fork.pane, "@roost-session-id") not in ("", doc["forked_from"]), "its id"
            )
        finally:
            _stop_strays(Path(roost.env["HOME"]))
    finally:
        api.close()
