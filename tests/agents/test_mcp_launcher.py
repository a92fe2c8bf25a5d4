"""A real Claude Code started by the web launcher in a tmux pane is told of rosterd's MCP server
on its command line (its manifest's ``[mcp]`` table), starts the bridge, and offers the
``rosterd`` tools to its model.

Claude connects its MCP servers while its prompt is already up, so a prompt typed at once may
go to the model before the tools are there (it then offers ``WaitForMcpServers``): the test
prompts again until a request names them. By default Claude 2.1 defers MCP tools behind its
``ToolSearch`` tool and names them in the request instead of listing their schemas; with
``ENABLE_TOOL_SEARCH=false`` it lists them as tools. Both are checked.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, START_TIMEOUT, TURN_TIMEOUT, _stop_strays
from tests.agents.test_headless_acp import _claude_home
from tests.agents.test_mcp_headless import BUDGET_TOOLS, SESSION_TOOLS, TOOLS, _offered
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.anthropic_api import AnthropicAPI

__all__ = ["daemon"]

NAMED = {f"mcp__rosterd__session_{tool}" for tool in SESSION_TOOLS} | {
    f"mcp__rosterd__budget_{tool}" for tool in BUDGET_TOOLS
}
"""How Claude names the tools to its model: the server's name, then the tool's, dots as ``_``."""


def _named(body: dict) -> set[str]:
    return set(re.findall(r"mcp__rosterd__[A-Za-z_]+", json.dumps(body)))


@pytest.mark.parametrize("search", [True, False], ids=["tool-search", "listed"])
def test_a_launched_claude_code_offers_the_rosterd_tools(
    roost: Roost, daemon: Daemon, anthropic_api: AnthropicAPI, agent_bin: Path, search: bool
) -> None:
    home = Path(roost.env["HOME"])
    project = (roost.root / "project").resolve()
    project.mkdir()
    _claude_home(home, project)
    seen = json.loads((home / ".claude.json").read_text())  # an interactive Claude asks more at start
    seen.update(hasSeenAutoDefaultNotice=True, hasSeenAutoDefaultNudge=True)
    (home / ".claude.json").write_text(json.dumps(seen))
    roost.env.update({"ANTHROPIC_BASE_URL": anthropic_api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET})
    if not search:
        roost.env["ENABLE_TOOL_SEARCH"] = "false"
    roost.env["PATH"] = f"{agent_bin}{os.pathsep}{roost.env['PATH']}"
    try:
        daemon.start()
        roost.start()
        with daemon.unix() as client:
            answer = client.post("/launch", json={"agent": "claude", "cwd": str(project)})
        assert answer.status_code == 201, answer.text
        pane = answer.json()["pane"]
        roost.wait_screen(pane, "for shortcuts", START_TIMEOUT)
        body = _until_named(roost, pane, anthropic_api)
        assert _named(body) == NAMED
        if not search:
            assert set(_offered(body)) == TOOLS, [tool.get("name") for tool in body["tools"]]
    finally:
        _stop_strays(home)


def _until_named(roost: Roost, pane: str, api: AnthropicAPI) -> dict:
    """Prompt until a request to the model names the rosterd tools; that request."""
    deadline = time.monotonic() + TURN_TIMEOUT
    while time.monotonic() < deadline:
        asked = len(api.requests)
        roost.tmux("send-keys", "-t", pane, "-l", "hello there")
        roost.tmux("send-keys", "-t", pane, "Enter")
        while time.monotonic() < deadline:
            new = [r.body for r in api.requests[asked:] if r.body.get("tools")]
            if new:
                if _named(new[-1]):
                    return new[-1]
                break
            time.sleep(0.1)
        time.sleep(1.0)  # the reply is drawn, the servers go on connecting
    raise AssertionError("no request to the model named the rosterd tools")
