"""Reading a hook event: what a dialog asks, found where the agent's manifest says to look."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.agents import manifest
from roost.agents.model import Hook
from roost.faces.hook.post import claim
from roost.truth.detect.hookevents import DIALOG_LIMIT, SUBAGENT_ACTIONS, HookEvent, from_hook, read


@pytest.fixture(autouse=True)
def own_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged manifest, not a user's copy, and its cache in the test's own dir."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))


def claude_hook() -> Hook:
    agent = manifest.load("claude")
    assert agent is not None
    return agent.hook


def dialog(tool: str, tool_input: object) -> str:
    return from_hook(
        {"hook_event_name": "PermissionRequest", "tool_name": tool, "tool_input": tool_input}, claude_hook()
    ).dialog


def test_a_question_is_found_through_the_manifest() -> None:
    questions = [{"question": "Which colour?", "header": "Colour", "options": []}, {"question": "Size?"}]
    assert dialog("AskUserQuestion", {"questions": questions}) == "AskUserQuestion: Which colour?"


@pytest.mark.parametrize(
    "tool_input",
    [
        {},
        {"questions": []},
        {"questions": "Which?"},
        {"questions": [{"question": 7}]},
        {"questions": [{}]},
        None,
    ],
)
def test_a_question_dialog_without_a_question_is_named_by_its_tool(tool_input: object) -> None:
    assert dialog("AskUserQuestion", tool_input) == "AskUserQuestion"


def test_the_known_fields_still_answer_when_the_manifests_path_finds_nothing() -> None:
    assert dialog("AskUserQuestion", {"description": "pick a colour"}) == "AskUserQuestion: pick a colour"


def test_without_a_manifest_path_a_tool_is_summarised_by_its_known_fields() -> None:
    payload = {"tool_name": "AskUserQuestion", "tool_input": {"questions": [{"question": "Which?"}]}}
    assert HookEvent.parse(payload).dialog == "AskUserQuestion"
    assert dialog("Bash", {"command": "npm test", "description": "run the tests"}) == "Bash: npm test"


@pytest.mark.parametrize("path", [["questions", True, "question"], ["questions", 5, "question"], "questions"])
def test_a_path_that_does_not_fit_the_input_finds_nothing(path: object) -> None:
    payload = {
        "tool_name": "Ask",
        "tool_input": {"questions": [{"question": "Which?"}, {"question": "Size?"}]},
    }
    assert HookEvent.parse(payload, {"Ask": path}).dialog == "Ask"
    assert HookEvent.parse(payload, {"Ask": ["questions", -1, "question"]}).dialog == "Ask: Size?"


def test_a_dialog_is_one_line_and_cut_where_the_badge_cuts() -> None:
    long = dialog("AskUserQuestion", {"questions": [{"question": "Pick:\n\n" + "x" * 500}]})
    assert long == ("AskUserQuestion: Pick: " + "x" * 500)[:DIALOG_LIMIT]
    assert len(long) == DIALOG_LIMIT == 200


@pytest.mark.parametrize(
    ("name", "action"),
    [
        ("SessionStart", None),
        ("UserPromptSubmit", None),
        ("PreToolUse", "tool"),
        ("PermissionRequest", "blocked"),
        ("PostToolUse", "working"),
        ("Stop", None),
        ("StopFailure", None),
    ],
)
def test_a_subagents_event_shows_a_dialog_or_work_and_nothing_else(name: str, action: str | None) -> None:
    """One rule, read once, for the badge and the claim: a subagent's event never starts,
    ends or fails the pane's turn, nor names its session."""
    payload = {"hook_event_name": name, "agent_id": "sub-1", "session_id": "s", "cwd": "/w"}
    heard = read("claude", payload)
    assert (heard.action if heard else None) == action
    if heard is not None:
        assert heard.action in SUBAGENT_ACTIONS
        body = claim(heard)
        if action == "tool":  # no agent's tool posts a claim: it only says a turn goes on
            assert body is None
        else:
            assert body is not None and body["activity"] == action
            assert "session_id" not in body["fields"]


def test_an_event_nobody_acts_on_is_not_read_into_anything() -> None:
    assert read("claude", {"hook_event_name": "SubagentStop"}) is None
    assert read("no-such-agent", {"hook_event_name": "Stop"}) is None
    heard = read("claude", {"hook_event_name": "Stop", "last_assistant_message": "done."})
    assert heard is not None and (heard.agent.name, heard.action, heard.event.reply) == (
        "claude",
        "done",
        "done.",
    )
