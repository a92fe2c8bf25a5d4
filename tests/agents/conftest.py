"""Tier 3: the real agent CLIs from npm, in roost panes, against fake model APIs.

Claude Code and Codex have fixtures here (``claude``, ``codex``) for the tests that go deep into
one agent; every agent in the launcher also walks the same matrix (``test_matrix.py``), started
from its recipe.

Each agent runs in the ``roost`` fixture's sandbox (private tmux server, HOME, XDG dirs) and
talks only to a fake API the test serves on 127.0.0.1, so real hooks, real permission dialogs
and real screens are exercised with no network. The CLIs are installed once per machine by
``scripts/install-test-agents`` (run by ``scripts/bootstrap --test``); a run without them fails
(``agent_bin`` in tests/conftest.py): a green ``make test`` means they ran.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.claudehome import API_KEY, CLAUDE_QUIET, claude_home
from tests.fakes.model_api import ModelAPI
from tests.fakes.responses_api import ResponsesAPI
from tests.signals import signal_if
from tests.web.conftest import Web

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30
TURN_TIMEOUT = 60

TIMINGS: list[str] = []


@dataclass
class AgentPane:
    """One real agent running in a roost pane, and what a test needs to watch it."""

    roost: Roost
    name: str  # the agent, and the name of its window
    pane: str
    project: Path
    api: ModelAPI

    def screen(self) -> str:
        return self.roost.screen(self.pane)

    def state(self) -> str:
        return self.roost.option(self.pane, "@roost-state")

    def wait(self, predicate: Callable[[], object], timeout: float, what: str) -> float:
        """``wait_until``, with the agent's screen and badge in the failure message."""
        try:
            return wait_until(predicate, timeout, what)
        except AssertionError as error:
            raise AssertionError(f"{error}\nbadge: {self.state()!r}\n{self.evidence()}") from None

    def evidence(self) -> str:
        """What a failed wait needs to be explained: the screen, the badge's moves as the
        events log has them, and how many requests the fake API saw."""
        parts = [f"screen:\n{self.screen()}"]
        try:
            parts.append(f"events log: {[(e['from'], e['to'], e['reason']) for e in self.events()]}")
        except (AssertionError, ValueError, KeyError) as error:
            parts.append(f"events log unreadable: {error}")
        parts.append(f"model API: {len(self.api.requests)} requests")
        return "\n".join(parts)

    def wait_state(self, word: str, timeout: float = TURN_TIMEOUT) -> None:
        self.wait(lambda: self.state() == word, timeout, f"{self.pane} to be {word}")

    def keys(self, *keys: str) -> None:
        self.roost.tmux("send-keys", "-t", self.pane, *keys)

    def events(self) -> list[dict]:
        """This pane's lines in the events log, oldest first (``roost events --pane``)."""
        proc = self.roost.run("events", "--pane", self.pane)
        assert proc.returncode == 0, proc.stderr
        return [json.loads(line) for line in proc.stdout.splitlines()]

    def transitions(self) -> list[tuple[str | None, str | None]]:
        return [(e["from"], e["to"]) for e in self.events() if e["event"] == "state"]

    def timed(self, what: str, seconds: float) -> None:
        TIMINGS.append(f"{self.name}: {what} {seconds:.2f}s")


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> float:
    """Poll ``predicate``; returns the seconds it took, fails the test on timeout."""
    began = time.monotonic()
    deadline = began + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic() - began
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def transcript_settled(transcript: Path) -> bytes:
    """Claude's transcript once its turn is written whole: Claude adds the summary of its Stop
    hooks after they ran, which is after the badge read done. An agent killed before that (a
    reboot, a fork's copy) has no reply for the turn, and a resumed Claude answers for it
    "No response requested."."""
    last, since = b"", time.monotonic()
    while time.monotonic() - since < 1.0:
        now = transcript.read_bytes()
        if now != last or b"stop_hook_summary" not in now:
            last, since = now, time.monotonic()
        time.sleep(0.1)
    return last


def _integrate(roost: Roost, harness: str, action: str = "install", *flags: str) -> None:
    """Install (or remove) roost's hooks the way a user does: ``rosterd integrate install HARNESS``."""
    proc = subprocess.run(
        [str(BIN / "rosterd"), "integrate", action, harness, *flags],
        capture_output=True,
        text=True,
        env=roost.env,
        timeout=60,
    )
    assert proc.returncode == 0, f"rosterd integrate {action} {harness}: {proc.stderr}"


def _stop_strays(home: Path) -> None:
    """End any process left running from the test's HOME, by PID: one that names it in its
    command line (codex's app-server daemon) or was started in one of its panes with it as
    HOME (Gemini CLI, which starts itself again, detached, once a folder is trusted). The tmux
    server and the daemon have that HOME too, but no pane: their fixtures end them."""
    named = str(home).encode()
    lives = b"\0HOME=" + named + b"\0"

    def stray(pid: int) -> bool:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            environ = b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            return False
        return named in command or (lives in environ and b"\0TMUX_PANE=" in environ)

    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid() and stray(pid := int(proc.name)):
            signal_if(pid, signal.SIGTERM, lambda pid=pid: stray(pid))


def _start(roost: Roost, name: str, project: Path, command: str) -> str:
    proc = roost.run("new", "-d", "-s", "main", "-n", name, "-c", str(project), command)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture
def web(roost: Roost, daemon: Daemon) -> Iterator[Web]:
    """A daemon started before the agent, whose socket the agent's hooks find (same runtime
    dir), seen from a browser's side; a module using it imports ``daemon`` too."""
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    yield Web(daemon, roost)


@pytest.fixture
def anthropic_api() -> Iterator[AnthropicAPI]:
    api = AnthropicAPI()
    yield api
    api.close()


@pytest.fixture
def responses_api() -> Iterator[ResponsesAPI]:
    api = ResponsesAPI()
    yield api
    api.close()


@pytest.fixture
def agent_flags() -> tuple[str, ...]:
    """Flags the ``claude`` and ``codex`` fixtures start their agent with: none, unless a test
    parametrizes this (``@pytest.mark.parametrize("agent_flags", [("--model", "m")])``)."""
    return ()


@pytest.fixture
def claude_trusts() -> tuple[str, ...]:
    """Folders, relative to the sandbox's root, that the ``claude`` fixture's Claude trusts
    besides its project (a worktree a test will make), as a person who answered its trust
    question there once: none, unless a test parametrizes this."""
    return ()


@pytest.fixture
def claude(
    request: pytest.FixtureRequest,
    roost: Roost,
    anthropic_api: AnthropicAPI,
    agent_bin: Path,
    agent_flags: tuple[str, ...],
    claude_trusts: tuple[str, ...],
) -> Iterator[AgentPane]:
    """Claude Code at its idle prompt in window ``claude``, hooks installed, first-run screens skipped.

    Parametrized indirectly with False, the hooks are installed and then removed again with
    ``rosterd integrate uninstall claude`` before Claude starts: an agent that reports nothing.
    With ``"gate"``, the permission gate is installed too (``integrate install claude --gate``);
    with ``"http"``, the hooks post to the daemon's hook port (``integrate install claude
    --http``), for which a daemon must have written its config first; ``"gate-http"`` is both.
    """
    hooks = getattr(request, "param", True)
    home = Path(roost.env["HOME"])
    project = (roost.root / "project").resolve()
    project.mkdir()
    claude_home(home, project, *(roost.root / folder for folder in claude_trusts))
    _integrate(roost, "claude")
    if not hooks:
        _integrate(roost, "claude", "uninstall")
    if hooks == "gate":
        _integrate(roost, "claude", "install", "--gate")
    if hooks in ("http", "gate-http"):  # the daemon's hook port, as rosterd.toml names it
        _integrate(roost, "claude", "install", "--http", *(("--gate",) if hooks == "gate-http" else ()))
    env = {"ANTHROPIC_BASE_URL": anthropic_api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}
    command = shlex.join(
        ["exec", "env", *(f"{k}={v}" for k, v in env.items()), str(agent_bin / "claude"), *agent_flags]
    )
    began = time.monotonic()
    pane = _start(roost, "claude", project, command)
    agent = AgentPane(roost, "claude", pane, project, anthropic_api)
    agent.wait(
        lambda: (
            "? for shortcuts" in agent.screen()
            and (not hooks or roost.option(pane, "@roost-harness") == "claude")
        ),
        START_TIMEOUT,
        "Claude Code's idle prompt and its SessionStart hook",
    )
    agent.timed("start to idle prompt", time.monotonic() - began)
    yield agent
    _stop_strays(home)


@pytest.fixture
def codex(
    roost: Roost, responses_api: ResponsesAPI, agent_bin: Path, agent_flags: tuple[str, ...]
) -> Iterator[AgentPane]:
    """Codex at its idle prompt in window ``codex``, hooks installed, the folder trusted."""
    home = Path(roost.env["HOME"])
    project = (roost.root / "project").resolve()
    project.mkdir()
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f"""model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "Fake"
base_url = "{responses_api.url}/v1"
wire_api = "responses"

[projects."{project}"]
trust_level = "trusted"
"""
    )
    _integrate(roost, "codex")
    command = shlex.join(["exec", str(agent_bin / "codex"), *agent_flags])
    began = time.monotonic()
    pane = _start(roost, "codex", project, command)
    agent = AgentPane(roost, "codex", pane, project, responses_api)
    agent.wait(lambda: "? for shortcuts" in agent.screen(), START_TIMEOUT, "Codex's idle prompt")
    agent.timed("start to idle prompt", time.monotonic() - began)
    yield agent
    _stop_strays(home)


def pytest_terminal_summary(terminalreporter) -> None:
    if TIMINGS:
        terminalreporter.write_sep("-", "real agent timings")
        for line in TIMINGS:
            terminalreporter.write_line(line)
