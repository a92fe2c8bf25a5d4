"""A real harness is offered rosterd's tools: a headless Claude Code (``claude-agent-acp``),
offline against the fake Messages API, starts the MCP bridge the runner hands it in
``session/new``, and every request to the model lists the ``rosterd`` tools; the model then
calls one, and the call reaches the daemon as the session's own.

Codex (``codex-acp``) is offered the same server, but its model sees MCP tools only through its
``tool_search`` tool, not in each request's list, so the request cannot show them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.agents.test_headless_acp import Real, real
from tests.daemon.fixture import daemon
from tests.fakes.model_api import Step, ToolCall, default_script

__all__ = ["daemon", "real"]

SESSION_TOOLS = {"list", "find", "read_state", "spawn", "fork", "send", "cancel", "allow", "deny"}
BUDGET_TOOLS = {"list", "lift"}
TOOLS = SESSION_TOOLS | {f"budget.{tool}" for tool in BUDGET_TOOLS}
"""rosterd's tools by short name: a session tool's alone (``read_state``), a budget tool's with
its group (``budget.lift``)."""


def _offered(body: dict[str, Any]) -> dict[str, str]:
    """The rosterd tools a model request offers, by short name (:data:`TOOLS`), whatever the
    harness prefixes and however it spells the dot."""
    found = {}
    for tool in body.get("tools") or []:
        name = str(tool.get("name") or (tool.get("function") or {}).get("name") or "")
        if "rosterd" in name:
            *_, group, rest = re.split(r"(session|budget)", name)
            short = rest.lstrip("._-")
            found[short if group == "session" else f"{group}.{short}"] = name
    return found


def _conversation(real: Real) -> list[dict[str, Any]]:
    return [r.body for r in real.api.requests if r.body.get("tools")]


@pytest.mark.parametrize("real", ["claude"], indirect=True)
def test_the_model_is_offered_the_rosterd_tools(real: Real) -> None:
    real.headless.daemon.start()
    key = real.start()["session_key"]
    real.turn(key, "hello there")
    requests = _conversation(real)
    assert requests, real.api.requests
    for body in requests:
        assert set(_offered(body)) == TOOLS, [tool.get("name") for tool in body.get("tools") or []]


@pytest.mark.parametrize("real", ["claude"], indirect=True)
def test_the_model_calls_a_rosterd_tool_and_the_daemon_knows_the_caller(real: Real) -> None:
    real.headless.daemon.start()
    key = real.start(name="caller", policy="auto")["session_key"]
    real.turn(key, "hello there")
    listed = _offered(_conversation(real)[-1])["list"]

    def script(prompt: str) -> Step:
        if "ROSTERD" in prompt:
            return ToolCall("list the sessions", then="LISTED", tool=listed, input={"include_ended": False})
        return default_script(prompt)

    real.api.script = script
    done = real.turn(key, "ROSTERD please")
    assert done["recap"] == "LISTED"
    results = [
        block
        for body in _conversation(real)
        for message in body.get("messages") or []
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert results, _conversation(real)[-1]
    content = results[-1]["content"]
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
    answer = json.loads(text)
    assert answer.get("caller") == key, text
    assert key in {row["session_key"] for row in answer["sessions"]}
