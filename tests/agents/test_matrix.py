"""Every agent CLI in the launcher through one matrix, each the real CLI from npm, offline.

For each agent whose recipe (``tests/fixtures/screens/<agent>/recipe.toml``) has a
``[matrix]`` table, and for each way roost can know it (its integration installed with
``rosterd integrate install``, or installed and removed again so the screen alone tells), one
test walks the same path under a running ``rosterd``:

1. start: the recipe's ``[[matrix.start]]`` steps reach the idle prompt (a folder-trust dialog
   on the way reads blocked);
2. a quick turn, then a slow one: the roster goes active and back to idle; with the
   integration the pane badge ends ``done``, ``roost send`` numbers the second turn 2 and
   ``roost read --turn 2`` gives its reply exactly;
3. a prompt that opens the agent's dialog: blocked in the roster (and on the badge);
4. declining it (``decline`` keys): neither reads blocked any more;
5. an API error: the roster ends idle (the agent's error or its quiet end), never active, and
   where roost tells the failure (``error = "error"``: the host reports it, or a screen rule
   overrules the hook's done) the badge and the roster's state say ``error``; then a good
   turn's done stands, though the error is still on screen above it.

With the integration the roster's activity comes from the hook; without it, from the screen.
Adding an agent is adding its recipe (with ``[matrix]``), its manifest and its recordings.
"""

from __future__ import annotations

import json
import re
import shlex
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agents.conftest import START_TIMEOUT, TURN_TIMEOUT, _integrate, _stop_strays, wait_until
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.model_api import ModelAPI
from tests.recorder import APIS, SCREENS, do_step, prepare, script

pytestmark = pytest.mark.agent

__all__ = ["daemon"]

RECIPES = {
    path.parent.name: tomllib.loads(path.read_text()) for path in sorted(SCREENS.glob("*/recipe.toml"))
}
ROWS = {name: recipe for name, recipe in RECIPES.items() if "matrix" in recipe}
CASES = [
    pytest.param(name, hooks, id=f"{name}-{'integration' if hooks else 'screen'}")
    for name, recipe in ROWS.items()
    for hooks in (True, False)
    if not hooks or recipe["matrix"].get("integration")
]
PAUSE = 1.0
HOLD = 2.0
"""Seconds a good turn's done after an error is watched for: the screen must not take it back."""
"""A person's pause before answering a dialog; some agents ignore keys that come right after it draws."""


@dataclass
class Matrix:
    """One agent in a roost pane, as the roster and the pane badge tell it."""

    roost: Roost
    daemon: Daemon
    client: httpx.Client
    name: str
    recipe: dict[str, Any]
    hooks: bool
    pane: str
    project: Path
    api: ModelAPI

    @property
    def row(self) -> dict[str, Any]:
        return self.recipe["matrix"]

    def screen(self) -> str:
        return self.roost.screen(self.pane)

    def badge(self) -> str:
        return self.roost.option(self.pane, "@roost-state")

    def record(self) -> dict[str, Any]:
        """The pane's record in the roster, or ``{}`` before there is one."""
        response = self.client.get("/snapshot")
        assert response.status_code == 200, response.text
        rows = [r for r in response.json()["records"] if (r.get("tmux") or {}).get("pane") == self.pane]
        return rows[0] if rows else {}

    def activity(self) -> str | None:
        return self.record().get("activity")

    def wait(self, predicate: Any, what: str, timeout: float = TURN_TIMEOUT) -> float:
        try:
            return wait_until(predicate, timeout, what)
        except AssertionError as error:
            raise AssertionError(f"{self.name}: {error}\n{self.evidence()}") from None

    def evidence(self) -> str:
        """What a failure needs to be explained: the readings, the badge's moves, the screen."""
        events = self.roost.run("events", "--pane", self.pane).stdout.splitlines()
        moves = [(e.get("from"), e.get("to"), e.get("reason")) for e in map(json.loads, events)]
        turn = self.roost.option(self.pane, "@roost-turn")
        return (
            f"roster: {self.activity()!r} badge: {self.badge()!r} turn: {turn!r}"
            f"\nevents log: {moves}\nmodel API: {len(self.api.requests)} requests\nscreen:\n{self.screen()}"
        )

    def step(self, step: dict[str, Any]) -> None:
        """One of the recipe's steps, walked as the recorder walks it."""

        def until(pattern: str, present: bool) -> None:
            what = f"{pattern!r} {'on screen' if present else 'to go'}"
            self.wait(
                lambda: bool(re.search(pattern, self.screen(), re.MULTILINE)) == present, what, START_TIMEOUT
            )

        do_step(step, lambda *keys: self.roost.tmux("send-keys", "-t", self.pane, *keys), until)

    def send(self, prompt: str) -> dict[str, Any]:
        """``roost send --json``: the prompt is proven submitted, or the test fails."""
        proc = self.roost.run("send", "--json", self.pane, prompt, timeout=TURN_TIMEOUT)
        assert proc.returncode == 0, f"{self.name}: roost send: {proc.stderr}\n{self.evidence()}"
        return json.loads(proc.stdout)

    def until_idle(self, said: int) -> str:
        """The turn that made the model's reply number ``said`` (from 1) has ended: the reply is
        on screen and the roster says idle. Returns the reply. (Agents wrap a prompt in their
        own context before the model sees it, so the reply is the fake API's, not computed.)"""

        def ended() -> bool:
            if len(self.api.streamed) < said:
                return False
            shown = self.api.streamed[said - 1].splitlines()[-1]
            return shown in self.screen() and self.activity() == "idle"

        self.wait(ended, f"the turn with reply {said} to end")
        return self.api.streamed[said - 1]


def launch(
    roost: Roost, daemon: Daemon, client: httpx.Client, name: str, hooks: bool, api: ModelAPI, agent_bin: Path
) -> Matrix:
    """The agent in window ``name`` of session ``main``, at its idle prompt."""
    recipe = ROWS[name]
    row = recipe["matrix"]
    home = Path(roost.env["HOME"])
    project = (roost.root / "project").resolve()
    project.mkdir()
    env = prepare(recipe, api.url, home, Path(roost.env["XDG_CONFIG_HOME"]), project, roost.env["PATH"])
    if row.get("integration"):
        _integrate(roost, row["integration"])
        if not hooks:
            _integrate(roost, row["integration"], "uninstall")
    binary = agent_bin / recipe["binary"]
    argv = [str(binary), *row.get("args", [])]
    command = shlex.join(["exec", "env", *(f"{k}={v}" for k, v in env.items()), *argv])
    proc = roost.run("new", "-d", "-s", "main", "-n", name, "-c", str(project), command)
    assert proc.returncode == 0, proc.stderr
    agent = Matrix(roost, daemon, client, name, recipe, hooks, proc.stdout.strip(), project, api)
    for step in row.get("start", []):
        agent.step(step)
    idle = row["idle"]
    agent.wait(lambda: re.search(idle, agent.screen(), re.MULTILINE), "the idle prompt", START_TIMEOUT)
    return agent


@pytest.fixture
def rosterd(roost: Roost, daemon: Daemon) -> Iterator[tuple[Daemon, httpx.Client]]:
    """A daemon started before the agent, whose socket the agent's hooks find (same runtime dir)."""
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    with daemon.unix(timeout=TURN_TIMEOUT) as client:
        yield daemon, client


@pytest.mark.parametrize(("name", "hooks"), CASES)
def test_start_turn_dialog_decline_and_api_error(
    name: str, hooks: bool, roost: Roost, rosterd: tuple[Daemon, httpx.Client], agent_bin: Path
) -> None:
    recipe = ROWS[name]
    api = APIS[recipe.get("api", "anthropic")](script=script(recipe.get("tool", "Bash")))
    try:
        agent = launch(roost, *rosterd, name, hooks, api, agent_bin)
        try:
            walk(agent)
        finally:
            _stop_strays(Path(roost.env["HOME"]))
    finally:
        api.close()


def walk(agent: Matrix) -> None:
    row = agent.row
    agent.send("hello there")
    agent.until_idle(1)
    if agent.hooks:
        agent.wait(lambda: agent.badge() == "done", "the first turn's done badge")

    slow = "take your time SLOW"
    sent = agent.send(slow)
    agent.wait(lambda: agent.activity() == "active", "the slow turn to read active", 10)
    reply = agent.until_idle(2)
    record = agent.record()
    assert ("hook" in record["sources"]) is agent.hooks, record["sources"]
    assert "screen" in record["sources"] or agent.hooks, record["sources"]
    if agent.hooks:
        assert sent["turn"] == 2, sent
        agent.wait(lambda: agent.badge() == "done", "the slow turn's done badge")
        read = agent.roost.run("read", "--turn", "2", agent.pane)
        assert read.returncode == 0, read.stderr
        assert read.stdout == reply

    agent.send(row["dialog_prompt"])
    dialog = row["dialog"]
    agent.wait(lambda: re.search(dialog, agent.screen(), re.MULTILINE), "the dialog")
    agent.wait(lambda: agent.activity() == "needs_attention", "the dialog to read blocked in the roster", 5)
    if agent.hooks:
        agent.wait(lambda: agent.badge() == "blocked", "the dialog's blocked badge", 5)
    time.sleep(PAUSE)
    for key in row.get("decline", ["Escape"]):
        agent.roost.tmux("send-keys", "-t", agent.pane, key)
    agent.wait(lambda: not re.search(dialog, agent.screen(), re.MULTILINE), "the dialog to close")
    agent.wait(
        lambda: agent.activity() != "needs_attention" and agent.badge() != "blocked",
        "the declined dialog to stop reading blocked",
        5,
    )
    agent.wait(lambda: agent.activity() == "idle", "the declined turn to end idle")

    failing = "this will FAIL"
    agent.send(failing)
    agent.wait(lambda: re.search(row["error_shows"], agent.screen(), re.MULTILINE), "the API error on screen")
    agent.wait(lambda: agent.activity() == "idle", "the failed turn to end idle")
    if agent.hooks and row.get("error") == "error":
        agent.wait(lambda: agent.badge() == "error", "the error badge", 5)
        agent.wait(lambda: agent.record().get("state") == "error", "the roster's error", 5)
        assert agent.record().get("error_reason"), agent.record()
        agent.send("hello after the error")
        agent.wait(lambda: agent.badge() == "done", "the next turn's done badge")
        agent.wait(lambda: agent.record().get("state") == "done", "the next turn's done in the roster", 5)
        held = time.monotonic() + HOLD
        while time.monotonic() < held:
            assert (agent.badge(), agent.record().get("state")) == ("done", "done"), agent.evidence()
            time.sleep(0.1)
