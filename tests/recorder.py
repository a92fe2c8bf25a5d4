"""Recording an agent CLI's screens for the screen tier's fixtures, from the real CLI.

``scripts/record-screens AGENT`` runs this inside a loopback-only network namespace. It starts
the fake model API, then the agent (from ``.cache/agents``) in a throwaway tmux server with a
throwaway HOME, and walks the tour in ``tests/fixtures/screens/AGENT/recipe.toml``: each step
types or presses keys, waits for the screen to show something, and may save the screen as
``<state>-<variant>.txt`` (``capture-pane -e``, the pane's title first as an OSC 0 sequence,
as ``Screen.parse`` reads a live pane). The tour runs once per size in ``sizes``; a size other
than the first is added to each file's name. ``tests/detect/test_screenrules.py`` then checks
the agent's manifest against every file. Re-record when a CLI's pinned version changes.

A recipe is data: ``binary`` (under ``.cache/agents/node_modules/.bin``), ``api``
(``anthropic``: the fake Messages API; ``gemini``: the fake Gemini API; ``responses``: the
fake Responses API), ``tool`` (the name
of the agent's shell tool), ``env`` and ``files`` (``{api}`` is the fake API's URL,
``{home}``, ``{config}`` (its XDG config folder) and ``{project}`` the throwaway folders,
``{bin}`` the agents' ``.bin``, ``{path}`` the PATH it would inherit), ``copy``
(a file out of the installed packages, by its path under ``.cache/agents``), ``sizes``, and
``[[step]]``\\ s with ``type``, ``keys``, ``pause``, ``wait`` (a regular expression, searched
in the screen), ``gone`` (one that must have left it: a turn's busy line) and ``shot``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.gemini_api import GeminiAPI
from tests.fakes.model_api import Failure, ModelAPI, Reply, Step, ToolCall, default_script
from tests.fakes.responses_api import ResponsesAPI

ROOT = Path(__file__).resolve().parents[1]
SCREENS = ROOT / "tests" / "fixtures" / "screens"
AGENTS = ROOT / ".cache" / "agents" / "node_modules" / ".bin"
WAIT = 30.0
APIS = {"anthropic": AnthropicAPI, "gemini": GeminiAPI, "responses": ResponsesAPI}
"""The fake model APIs a recipe may name."""
LOOKS_LIKE_A_DIALOG = (
    "Do you want to run this command?\n\n❯ 1. Yes\n  2. No, and tell the agent what to do differently\n\n"
    "(Esc to cancel) Working · esc to interrupt"
)
"""A reply that reads like a dialog and a busy line: the screen must still read idle."""


def script(tool: str) -> Any:
    """The tests' model script, with the words a tour needs beside it and the agent's shell tool."""

    def step(prompt: str) -> Step:
        if "RETRY" in prompt:
            return Failure(529, "Overloaded")
        if "DIALOGLIKE" in prompt:
            return Reply(LOOKS_LIKE_A_DIALOG)
        if "RMRF" in prompt:  # what an agent's own guard (pi's permission-gate example) asks about
            return ToolCall("rm -rf build", then="RMRF-DONE", tool=tool, input={"command": "rm -rf build"})
        found = default_script(prompt)
        if isinstance(found, ToolCall) and found.tool is None:
            return ToolCall(
                found.command,
                then=found.then,
                then_delay=found.then_delay,
                tool=tool,
                input={"command": found.command, "description": "Run the command"},
            )
        return found

    return step


class Tour:
    """One run of a recipe's steps at one size."""

    def __init__(self, agent: str, recipe: dict[str, Any], size: str, out: Path, suffix: str) -> None:
        self.agent, self.recipe, self.out, self.suffix = agent, recipe, out, suffix
        self.width, self.height = size.split("x")
        self.root = Path(tempfile.mkdtemp(prefix="rec", dir="/tmp"))
        self.socket = str(self.root / "tmux.sock")
        self.saved: list[str] = []

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=10)
        return done.stdout

    def screen(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "%0")

    def run(self, api: ModelAPI) -> None:
        home, project = self.root / "home", self.root / "project"
        home.mkdir()
        project.mkdir()
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        env |= prepare(self.recipe, api.url, home, home / ".config", project, env["PATH"])
        binary = AGENTS / self.recipe["binary"]
        command = shlex.join(["exec", "env", "-i", *(f"{k}={v}" for k, v in env.items()), str(binary)])
        self.tmux("-f", "/dev/null", "new-session", "-d", "-x", self.width, "-y", self.height)
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.tmux("respawn-pane", "-k", "-t", "%0", "-c", str(project), command)
        try:
            for step in self.recipe["step"]:
                self.do(step)
        finally:
            self.tmux("kill-server")
            shutil.rmtree(self.root, ignore_errors=True)

    def do(self, step: dict[str, Any]) -> None:
        do_step(
            step,
            lambda *keys: self.tmux("send-keys", "-t", "%0", *keys),
            lambda pattern, present: self.wait(pattern, step.get("timeout", WAIT), present),
        )
        if "shot" in step:
            self.shot(step["shot"])

    def wait(self, pattern: str, timeout: float, present: bool = True) -> None:
        deadline = time.monotonic() + timeout
        while bool(re.search(pattern, self.screen(), re.MULTILINE)) != present:
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"record: {self.agent}: waited {timeout}s for {pattern!r}; the screen:\n{self.screen()}"
                )
            time.sleep(0.2)

    def shot(self, label: str) -> None:
        title = self.tmux("display-message", "-p", "-t", "%0", "#{pane_title}").rstrip("\n")
        name = f"{label}{self.suffix}.txt"
        (self.out / name).write_text(f"\x1b]0;{title}\x07" + self.screen(escapes=True))
        self.saved.append(name)
        print(f"record: {self.agent}: {name}", flush=True)


def do_step(step: dict[str, Any], keys: Callable[..., object], until: Callable[[str, bool], None]) -> None:
    """A recipe step's moves: ``type``, ``keys``, ``pause``, then ``wait`` and ``gone``.

    The recorder and the agent tier's matrix both walk recipes with this, so a step means the
    same in both; ``keys(*args)`` sends keys to the agent's pane, ``until(pattern, present)``
    returns once the pattern is (or is no longer) on its screen, and fails otherwise."""
    if "type" in step:
        keys("-l", step["type"])
    for key in step.get("keys", []):
        time.sleep(0.3)  # apart, as a person presses them: some agents drop a key that follows another
        keys(key)
    time.sleep(step.get("pause", 0.0))
    if "wait" in step:
        until(step["wait"], True)
    if "gone" in step:
        until(step["gone"], False)


def prepare(
    recipe: dict[str, Any], api: str, home: Path, config: Path, project: Path, path: str
) -> dict[str, str]:
    """Write the recipe's ``files`` and ``copy`` for an agent that lives in ``home`` (its XDG
    config in ``config``), works in ``project`` and inherits ``path`` as its PATH; returns the
    recipe's environment, filled.

    The recorder and the agent tier's matrix (tests/agents/test_matrix.py) both start an agent
    this way, so what was recorded is what is tested."""
    fill = {
        "api": api,
        "home": str(home),
        "config": str(config),
        "project": str(project),
        "bin": str(AGENTS),
        "path": path,
    }
    for name, text in recipe.get("files", {}).items():
        path = Path(_fill(name, fill))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(text, fill))
    for name, source in recipe.get("copy", {}).items():
        path = Path(_fill(name, fill))
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(AGENTS.parents[1] / source, path)
    return {key: _fill(str(value), fill) for key, value in recipe.get("env", {}).items()}


def _fill(text: str, fill: dict[str, str]) -> str:
    """``{api}``-style names in a file's text whose other braces (JSON) stay as they are."""
    for name, value in fill.items():
        text = text.replace("{" + name + "}", value)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/record-screens", description=__doc__.split("\n\n")[0])
    parser.add_argument("agent")
    parser.add_argument("--out", type=Path, help="where the screens go (default: the agent's fixtures)")
    args = parser.parse_args()
    recipe_path = SCREENS / args.agent / "recipe.toml"
    recipe = tomllib.loads(recipe_path.read_text())
    if "step" not in recipe:  # its screens come from elsewhere: deleting them here would lose them
        print(f"record: {args.agent}: its recipe has no tour (see {recipe_path})", file=sys.stderr)
        return 2
    out = args.out or recipe_path.parent
    out.mkdir(parents=True, exist_ok=True)
    if args.out is None:
        for old in out.glob("*.txt"):
            old.unlink()
    sizes = recipe.get("sizes", ["120x40"])
    for index, size in enumerate(sizes):
        api = APIS[recipe.get("api", "anthropic")](script=script(recipe.get("tool", "Bash")))
        try:
            Tour(args.agent, recipe, size, out, "" if index == 0 else f"-{size}").run(api)
        finally:
            api.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
