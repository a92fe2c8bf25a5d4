"""``rosterd-hook`` against a real tmux server: every Claude event mapping, and failing open.

Most tests run the real ``rosterd-hook`` with the environment a pane gives its programs
(``TMUX`` naming the server's socket, ``TMUX_PANE``), which lets a test time it and read its
exit status exactly; one test runs it from a shell inside the pane itself.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from roost.faces.hook.main import HARD_DEADLINE
from roost.pane.state.events import Log
from tests.conftest import BIN, Roost
from tests.fakes.model_api import QUESTION

BOUND = 0.8  # the contract: exit 0 within 800 ms, whatever happens


def hook(
    roost: Roost,
    pane: str,
    payload: dict | None = None,
    *args: str,
    raw: bytes | None = None,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    settle: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """One real ``rosterd-hook`` run. With ``settle`` it returns once the event is applied: on a
    loaded machine the hook hands an event past its deadline to a copy that finishes it after
    the hook exits, and a test reading the badge at once would race that copy."""
    full_env = {**roost.env, "TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane, **(env or {})}
    data = raw if raw is not None else json.dumps(payload or {}).encode()
    proc = subprocess.run(
        [*prefix, str(BIN / "rosterd-hook"), *args], input=data, capture_output=True, env=full_env, timeout=20
    )
    if settle:
        settled(roost)
    return proc


def settled(roost: Roost) -> None:
    """Wait out any copy of the hook still finishing an event (see :func:`hook`)."""
    roost.wait_for(lambda: not copies(), timeout=HARD_DEADLINE + 2, what="a handed-off hook to finish")


def copies() -> list[int]:
    """Running ``rosterd-hook`` processes this test process adopted (it is their subreaper, see
    tests/leakguard.py): copies finishing a handed-off event."""
    me = str(os.getpid()).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        name, rest = stat[stat.find(b"(") + 1 : stat.rfind(b")")], stat[stat.rfind(b")") + 2 :].split()
        if name == b"rosterd-hook" and rest[1] == me and rest[0] != b"Z":
            found.append(int(entry))
    return found


def event(name: str, **fields: object) -> dict:
    return {"hook_event_name": name, "session_id": "sess-1", "cwd": "/tmp", **fields}


@pytest.fixture
def pane(roost: Roost) -> str:
    return roost.start("sh")


def state(roost: Roost, pane: str) -> str:
    return roost.option(pane, "@roost-state")


def events_logged(roost: Roost) -> list[dict]:
    return list(Log(roost.root / "state" / "roost" / "panes" / "events").read())


def reply(roost: Roost, pane: str) -> dict:
    return roost.json("read", "--json", pane)


def test_session_start_identifies_the_pane_and_tells_the_agent_its_id(roost: Roost, pane: str) -> None:
    transcript = "/tmp/sessions/sess-1.jsonl"
    proc = hook(roost, pane, event("SessionStart", source="startup", transcript_path=transcript))
    assert proc.returncode == 0
    assert pane in proc.stdout.decode()
    assert f"roost send {pane}" in proc.stdout.decode()
    assert roost.option(pane, "@roost-session-id") == "sess-1"
    assert roost.option(pane, "@roost-cwd") == "/tmp"
    assert roost.option(pane, "@roost-harness") == "claude"
    assert roost.option(pane, "@roost-transcript-path") == transcript
    assert state(roost, pane) == "idle"  # at its prompt, which only the agent can say so early
    assert roost.option(pane, "@roost-turn") == ""  # starting a session is not a turn


@pytest.mark.parametrize(
    ("source", "badge"), [("resume", "idle"), ("clear", "idle"), ("compact", ""), (None, "")]
)
def test_a_session_start_is_ready_for_a_prompt_only_when_it_starts_at_the_prompt(
    roost: Roost, pane: str, source: str | None, badge: str
) -> None:
    """Claude compacts mid-turn and then starts again: that start says who, not that it is idle."""
    proc = hook(roost, pane, event("SessionStart", **({"source": source} if source else {})))
    assert proc.returncode == 0 and pane in proc.stdout.decode()
    assert (roost.option(pane, "@roost-session-id"), state(roost, pane)) == ("sess-1", badge)


def test_a_relative_cwd_identifies_nothing(roost: Roost, pane: str) -> None:
    hook(roost, pane, {**event("SessionStart"), "cwd": "relative/dir"})
    assert roost.option(pane, "@roost-session-id") == ""


def test_user_prompt_submit_marks_working_and_begins_a_turn(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit", prompt="hello"))
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-turn") == "1"
    hook(roost, pane, event("UserPromptSubmit", prompt="again"))
    assert roost.option(pane, "@roost-turn") == "1"  # still the same turn: it never stopped


@pytest.mark.parametrize(
    ("tool", "tool_input", "reason"),
    [
        ("Bash", {"command": "npm test", "description": "run tests"}, "Bash: npm test"),
        ("Edit", {"file_path": "/src/a.py", "old_string": "x"}, "Edit: /src/a.py"),
        ("WebFetch", {"url": "https://example.test/"}, "WebFetch: https://example.test/"),
    ],
)
def test_permission_request_blocks_with_tool_and_summary(
    roost: Roost, pane: str, tool: str, tool_input: dict, reason: str
) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PermissionRequest", tool_name=tool, tool_input=tool_input))
    assert state(roost, pane) == "blocked"
    assert roost.option(pane, "@roost-reason") == reason


def asks(*questions: dict) -> dict:
    """Claude Code's PermissionRequest for its AskUserQuestion tool, as it fires one."""
    return event(
        "PermissionRequest",
        permission_mode="default",
        transcript_path="/tmp/t.jsonl",
        tool_name="AskUserQuestion",
        tool_input={"questions": list(questions)},
    )


def test_a_question_dialogs_reason_is_its_first_question(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    second = {**QUESTION, "question": "And its size?", "header": "Size"}
    assert hook(roost, pane, asks(QUESTION, second)).returncode == 0
    reason = "AskUserQuestion: Which colour should the button be?"
    assert (state(roost, pane), roost.option(pane, "@roost-reason")) == ("blocked", reason)
    assert events_logged(roost)[-1]["reason"] == reason
    # Claude's notification about the same dialog says less: the question stays the reason.
    hook(roost, pane, event("Notification", notification_type="elicitation_dialog", message="Claude asks"))
    assert roost.option(pane, "@roost-reason") == reason


def test_a_long_question_is_cut_like_a_long_command(roost: Roost, pane: str) -> None:
    """One line and the badge's 200 characters, whatever the agent asked."""
    hook(roost, pane, event("UserPromptSubmit"))
    words = " ".join(f"word{n}" for n in range(100))
    hook(roost, pane, asks({**QUESTION, "question": f"Pick one:\n\n  {words}?"}))
    reason = roost.option(pane, "@roost-reason")
    assert reason == f"AskUserQuestion: Pick one: {words}"[:200]
    assert events_logged(roost)[-1]["reason"] == reason
    hook(roost, pane, event("PostToolUse", tool_name="AskUserQuestion"))
    command = f"echo {words}"
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": command}))
    assert roost.option(pane, "@roost-reason") == f"Bash: {command}"[:200]


def test_a_question_with_no_text_is_named_by_its_tool(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, asks({**QUESTION, "question": "  "}))
    assert roost.option(pane, "@roost-reason") == "AskUserQuestion"


@pytest.mark.parametrize("kind", ["permission_prompt", "elicitation_dialog"])
def test_dialog_notifications_block(roost: Roost, pane: str, kind: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("Notification", notification_type=kind, message="Claude needs your input"))
    assert state(roost, pane) == "blocked"
    assert roost.option(pane, "@roost-reason") == "Claude needs your input"


def test_a_notification_after_the_dialog_keeps_the_dialogs_reason(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "npm test"}))
    hook(
        roost, pane, event("Notification", notification_type="permission_prompt", message="needs permission")
    )
    assert roost.option(pane, "@roost-reason") == "Bash: npm test"


def test_idle_prompt_notifications_change_nothing(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("Stop", last_assistant_message="done."))
    hook(roost, pane, event("Notification", notification_type="idle_prompt", message="waiting"))
    assert state(roost, pane) == "done"


@pytest.mark.parametrize("name", ["PostToolUse", "PostToolUseFailure"])
def test_a_finished_tool_unblocks(roost: Roost, pane: str, name: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "ls"}))
    hook(roost, pane, event(name, tool_name="Bash"))
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-reason") == ""


def test_pre_tool_use_never_clears_a_dialog(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}))
    assert state(roost, pane) == "working"
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "rm x"}))
    hook(roost, pane, event("PreToolUse", tool_name="Read", tool_input={"file_path": "/a"}))
    assert state(roost, pane) == "blocked"


def test_stop_records_the_reply_then_marks_done(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("Stop", last_assistant_message="All 12 tests pass."))
    assert state(roost, pane) == "done"
    assert roost.option(pane, "@roost-turn-done") == "1"
    doc = reply(roost, pane)
    assert (doc["source"], doc["text"], doc["turn"]) == ("reply", "All 12 tests pass.", 1)


def raw_event(name: str, **fields: bytes) -> bytes:
    """An event as the bytes a harness writes, each field's value given as raw JSON: a reply
    its harness cut in the middle of a character is not UTF-8, which ``json.dumps`` cannot write."""
    head = json.dumps(event(name))[:-1].encode()
    return head + b"".join(b', "%s": %s' % (key.encode(), value) for key, value in fields.items()) + b"}"


@pytest.mark.parametrize(
    ("written", "kept", "text"),
    [
        # half an emoji: a JSON escape of a lone surrogate, which no UTF-8 can hold
        (b'"cut \\ud83d"', b"cut \xed\xa0\xbd", "cut \ufffd\ufffd\ufffd"),
        # a byte that is not UTF-8, raw on stdin
        (b'"bad \xff byte"', b"bad \xff byte", "bad \ufffd byte"),
    ],
)
def test_a_reply_that_is_not_utf8_ends_the_turn_and_is_kept_lossy(
    roost: Roost, pane: str, written: bytes, kept: bytes, text: str
) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    proc = hook(roost, pane, raw=raw_event("Stop", last_assistant_message=written))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert state(roost, pane) == "done"
    assert [(e["from"], e["to"]) for e in events_logged(roost)][-1] == ("working", "done")
    assert roost.run("wait-done", pane, "5").returncode == 0
    read = subprocess.run([str(BIN / "roost"), "read", pane], capture_output=True, env=roost.env, timeout=20)
    assert read.stdout == kept  # as the harness wrote it, byte for byte
    doc = reply(roost, pane)
    assert (doc["source"], doc["turn"], doc["text"], doc["lossy"]) == ("reply", 1, text, True)


def test_a_prompt_that_is_not_utf8_begins_a_turn(roost: Roost, pane: str) -> None:
    hook(roost, pane, raw=raw_event("UserPromptSubmit", prompt=b'"bad \xff byte"'))
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-turn") == "1"
    assert roost.option(pane, "@roost-session-id") == "sess-1"


def test_an_identity_that_is_not_utf8_is_not_recorded(roost: Roost, pane: str) -> None:
    """An identity is kept exactly or not at all; the event still badges the pane."""
    prompt = b'{"hook_event_name": "UserPromptSubmit", "session_id": "sess-1", "cwd": "/tmp/\xff"}'
    hook(roost, pane, raw=prompt)
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-session-id") == ""
    assert roost.option(pane, "@roost-cwd") == ""


def test_stop_is_held_back_while_a_dialog_is_open(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "ls"}))
    before = len(events_logged(roost))
    hook(roost, pane, event("Stop", last_assistant_message="too early"))
    assert state(roost, pane) == "blocked"
    assert len(events_logged(roost)) == before  # the badge did not move, so no line


def test_stop_failure_is_an_error_with_its_reason(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("StopFailure", error="invalid_request", error_details="API Error: 400"))
    assert state(roost, pane) == "error"
    assert roost.option(pane, "@roost-reason") == "API Error: 400"


def test_stop_failure_reason_is_the_error_the_agent_showed(roost: Roost, pane: str) -> None:
    """Claude Code sends ``error: "unknown"`` beside the message it put on screen."""
    hook(roost, pane, event("UserPromptSubmit"))
    shown = "API Error: 400 the model API refused the prompt"
    hook(roost, pane, event("StopFailure", error="unknown", last_assistant_message=shown))
    assert state(roost, pane) == "error"
    assert roost.option(pane, "@roost-reason") == shown


def test_subagent_events_never_publish_a_reply_nor_end_the_turn(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("Stop", agent_id="sub-1", last_assistant_message="subagent's words"))
    hook(roost, pane, event("StopFailure", agent_id="sub-1", error="subagent failed"))
    hook(roost, pane, event("UserPromptSubmit", agent_id="sub-1"))
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-turn") == "1"
    assert roost.option(pane, "@roost-turn-done") == ""
    hook(roost, pane, event("Stop", last_assistant_message="the real answer"))
    assert reply(roost, pane)["text"] == "the real answer"


def test_a_subagents_dialog_still_blocks_the_pane(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(
        roost,
        pane,
        event("PermissionRequest", agent_id="sub-1", tool_name="Bash", tool_input={"command": "make"}),
    )
    assert state(roost, pane) == "blocked"
    assert roost.option(pane, "@roost-reason") == "Bash: make"


def test_every_change_is_one_line_in_the_events_log(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "npm test"}))
    hook(roost, pane, event("PostToolUse", tool_name="Bash"))
    hook(roost, pane, event("Stop", last_assistant_message="ok"))
    moves = [(e["from"], e["to"], e["reason"]) for e in events_logged(roost) if e["pane"] == pane]
    assert moves == [
        (None, "working", ""),
        ("working", "blocked", "Bash: npm test"),
        ("blocked", "working", ""),
        ("working", "done", ""),
    ]


def counting_tmux(tmp_path: Path) -> tuple[Path, Path]:
    """A ``tmux`` first on PATH that logs each call, then runs the real one."""
    real = subprocess.run(["which", "tmux"], capture_output=True, text=True, check=True).stdout.strip()
    directory = tmp_path / "bin"
    directory.mkdir()
    log = tmp_path / "tmux-calls"
    script = directory / "tmux"
    script.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return directory, log


def test_an_unchanged_state_costs_one_read_and_no_write(roost: Roost, pane: str, tmp_path: Path) -> None:
    hook(roost, pane, event("UserPromptSubmit"))
    directory, log = counting_tmux(tmp_path)
    path = f"{directory}{os.pathsep}{roost.env['PATH']}"
    before = len(events_logged(roost))
    assert hook(roost, pane, event("UserPromptSubmit"), env={"PATH": path}).returncode == 0
    assert hook(roost, pane, event("PreToolUse", tool_name="Read"), env={"PATH": path}).returncode == 0
    calls = log.read_text().splitlines()
    assert len(calls) == 2, calls
    assert all("set-option" not in call for call in calls)
    assert len(events_logged(roost)) == before


def test_an_ignored_event_costs_no_tmux_call(roost: Roost, pane: str, tmp_path: Path) -> None:
    directory, log = counting_tmux(tmp_path)
    path = f"{directory}{os.pathsep}{roost.env['PATH']}"
    hook(roost, pane, event("Notification", notification_type="idle_prompt"), env={"PATH": path})
    hook(roost, pane, event("SubagentStop"), env={"PATH": path})
    assert not log.exists()


def test_a_hook_run_from_a_shell_inside_the_pane(roost: Roost, pane: str, tmp_path: Path) -> None:
    """No test-made environment: the pane's own shell runs the hook, as an agent would."""
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(event("UserPromptSubmit")))
    done = tmp_path / "rc"
    roost.tmux("send-keys", "-t", pane, f"rosterd-hook < {payload}; echo $? > {done}", "Enter")
    roost.wait_for(lambda: done.exists() and done.read_text().strip(), timeout=20, what="the hook to run")
    assert done.read_text().strip() == "0"
    assert state(roost, pane) == "working"


def test_other_harnesses_are_recorded_by_name(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("SessionStart"), "codex")
    assert roost.option(pane, "@roost-harness") == "codex"
    hook(roost, pane, event("UserPromptSubmit"), "opencode")
    assert (roost.option(pane, "@roost-harness"), state(roost, pane)) == ("opencode", "working")


def test_codex_interrupt_ends_the_turn_with_nothing_said(roost: Roost, pane: str) -> None:
    hook(roost, pane, event("UserPromptSubmit"), "codex")
    hook(roost, pane, event("Stop", last_assistant_message="first"), "codex")
    hook(roost, pane, event("UserPromptSubmit"), "codex")
    hook(roost, pane, event("Interrupt"), "codex")
    assert state(roost, pane) == "done"
    assert reply(roost, pane)["source"] == "screen"  # the first turn's reply is not served as this one's


def test_codex_interrupt_ends_a_blocked_turn(roost: Roost, pane: str) -> None:
    """A declined dialog interrupts the turn: the agent says so, so the 🛑 goes at once."""
    hook(roost, pane, event("UserPromptSubmit"), "codex")
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "ls"}), "codex")
    assert state(roost, pane) == "blocked"
    hook(roost, pane, event("Interrupt"), "codex")
    assert state(roost, pane) == "done"
    assert roost.option(pane, "@roost-transcript") == ""
    assert events_logged(roost)[-1]["from"] == "blocked"


def test_a_dialog_is_stamped_once_and_to_the_millisecond(roost: Roost, pane: str) -> None:
    """A later notification about the same dialog must not move its opening time."""
    hook(roost, pane, event("UserPromptSubmit", transcript_path="/tmp/t.jsonl"))
    hook(roost, pane, event("PermissionRequest", tool_name="Bash", tool_input={"command": "ls"}))
    opened = roost.option(pane, "@roost-transcript")
    stamp, _, path = opened.partition(" ")
    assert path and "." in stamp and len(stamp.split(".")[1]) == 3
    hook(roost, pane, event("Notification", notification_type="permission_prompt", message="needs you"))
    assert roost.option(pane, "@roost-transcript") == opened


def test_a_shared_codex_process_never_badges_the_pane_it_inherited(roost: Roost, pane: str) -> None:
    """Hooks run under codex's app-server carry another pane's TMUX_PANE: only a pane that
    already holds the event's session may take it."""
    other = roost.window("other", "sh")
    in_daemon = ("sh", "-c", '"$@"; exit $?', "app-server")  # an ancestor whose argv says app-server
    assert (
        hook(
            roost, pane, event("UserPromptSubmit", session_id="thread-b"), "codex", prefix=in_daemon
        ).returncode
        == 0
    )
    assert state(roost, pane) == ""
    assert state(roost, other) == ""
    hook(roost, pane, event("UserPromptSubmit", session_id="thread-b"), "codex")
    assert state(roost, pane) == "working"  # the same event from the pane's own codex lands
    roost.tmux("set-option", "-p", "-u", "-t", pane, "@roost-state")
    roost.tmux("set-option", "-p", "-u", "-t", pane, "@roost-session-id")
    roost.tmux("set-option", "-p", "-t", other, "@roost-session-id", "thread-b")
    hook(roost, pane, event("UserPromptSubmit", session_id="thread-b"), "codex", prefix=in_daemon)
    assert state(roost, pane) == ""
    assert state(roost, other) == "working"


def test_a_manifest_can_rename_a_hosts_fields(roost: Roost, pane: str) -> None:
    """A harness whose hook program cannot be changed names its own fields as data."""
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    (agents / "mytool.toml").write_text(
        'name = "mytool"\nbinaries = ["mytool"]\n\n[hook]\nkind = "none"\n\n'
        '[hook.fields]\ntype = "hook_event_name"\n"thread-id" = "session_id"\n'
        '"last-assistant-message" = "last_assistant_message"\n\n'
        '[hook.events]\nprompt-submitted = "prompt"\nagent-turn-complete = "done"\n'
    )
    hook(roost, pane, {"type": "prompt-submitted", "thread-id": "t-1", "cwd": "/tmp"}, "mytool")
    assert roost.option(pane, "@roost-session-id") == "t-1"
    hook(roost, pane, {"type": "agent-turn-complete", "last-assistant-message": "renamed reply"}, "mytool")
    assert state(roost, pane) == "done"
    assert reply(roost, pane)["text"] == "renamed reply"


# Failing open: every case exits 0, quickly, and leaves the pane as it was.


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json at all", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b'"a string"', b'{"hook_event_name": 5}'],
)
def test_garbage_on_stdin_exits_0(roost: Roost, pane: str, raw: bytes) -> None:
    proc = hook(roost, pane, raw=raw)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert state(roost, pane) == ""


@pytest.mark.parametrize("harness", ["nosuchagent", "../../etc/passwd", "UPPER", ""])
def test_unknown_harness_exits_0(roost: Roost, pane: str, harness: str) -> None:
    proc = hook(roost, pane, event("UserPromptSubmit"), harness)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert state(roost, pane) == ""


def test_outside_tmux_exits_0(roost: Roost, pane: str) -> None:
    env = {k: v for k, v in roost.env.items() if not k.startswith("TMUX")}
    proc = subprocess.run(
        [str(BIN / "rosterd-hook")], input=json.dumps(event("UserPromptSubmit")).encode(), env=env, timeout=20
    )
    assert proc.returncode == 0


@pytest.mark.alone  # timed against the hook's deadline
def test_a_gone_server_or_pane_exits_0(roost: Roost, pane: str) -> None:
    assert hook(roost, "%999", event("UserPromptSubmit")).returncode == 0
    roost.tmux("kill-server")
    began = time.monotonic()
    proc = hook(roost, pane, event("UserPromptSubmit"), settle=False)
    assert proc.returncode == 0
    assert time.monotonic() - began < BOUND


def test_no_tmux_on_path_exits_0(roost: Roost, pane: str, tmp_path: Path) -> None:
    proc = hook(roost, pane, event("UserPromptSubmit"), env={"PATH": str(tmp_path)})
    assert proc.returncode == 0


def hung_tmux(tmp_path: Path) -> tuple[Path, Path]:
    directory = tmp_path / "hung"
    directory.mkdir()
    pids = tmp_path / "hung-pids"
    script = directory / "tmux"
    script.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return directory, pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().rsplit(")", 1)[1].split()[0] == "Z")


@pytest.mark.alone  # timed against the hook's deadline
def test_a_hung_tmux_fails_open_within_800ms_and_is_ended(roost: Roost, pane: str, tmp_path: Path) -> None:
    directory, pids = hung_tmux(tmp_path)
    began = time.monotonic()
    path = f"{directory}{os.pathsep}{roost.env['PATH']}"
    proc = hook(roost, pane, event("UserPromptSubmit"), env={"PATH": path}, settle=False)
    took = time.monotonic() - began
    assert proc.returncode == 0
    assert took < BOUND, f"took {took:.3f}s"
    started = [int(p) for p in pids.read_text().split()]
    assert started, "the fake tmux was never called"
    roost.wait_for(lambda: not any(alive(p) for p in started), timeout=5, what="the hung tmux to be ended")


def slow_tmux(tmp_path: Path, delay: float) -> Path:
    """A ``tmux`` that takes ``delay`` seconds to start, then is the real one: a loaded machine."""
    directory = tmp_path / "slow"
    directory.mkdir()
    script = directory / "tmux"
    script.write_text(f'#!/bin/sh\nsleep {delay}\nexec {shutil.which("tmux")} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return directory


@pytest.mark.alone  # timed against the hook's deadline
def test_an_event_that_outlasts_the_deadline_is_finished_after_the_hook_exits(
    roost: Roost, pane: str, tmp_path: Path
) -> None:
    """The agent gets its exit 0 within 800 ms, and the turn's end still reaches the badge:
    dropping it would leave the pane reading working for good."""
    hook(roost, pane, event("UserPromptSubmit"))
    directory = slow_tmux(tmp_path, 0.5)  # two calls (read, write): a second in all
    began = time.monotonic()
    proc = hook(
        roost,
        pane,
        event("Stop", last_assistant_message="finished late"),
        env={"PATH": f"{directory}{os.pathsep}{roost.env['PATH']}"},
        settle=False,
    )
    took = time.monotonic() - began
    assert proc.returncode == 0
    assert took < BOUND, f"took {took:.3f}s"
    assert state(roost, pane) == "working"  # not yet: the copy is still at it
    roost.wait_for(lambda: state(roost, pane) == "done", timeout=5, what="the handed-off Stop to land")
    assert reply(roost, pane)["text"] == "finished late"
    assert [(e["from"], e["to"]) for e in events_logged(roost)] == [(None, "working"), ("working", "done")]


@pytest.mark.alone  # timed against the hook's deadline
def test_a_handed_off_event_gives_up_at_the_hard_deadline(roost: Roost, pane: str, tmp_path: Path) -> None:
    """A tmux that never answers costs one process for at most ``HARD_DEADLINE``, not forever."""
    directory, pids = hung_tmux(tmp_path)
    began = time.monotonic()
    path = f"{directory}{os.pathsep}{roost.env['PATH']}"
    hook(roost, pane, event("UserPromptSubmit"), env={"PATH": path}, settle=False)
    started = [int(p) for p in pids.read_text().split()]
    roost.wait_for(lambda: not any(alive(p) for p in started), timeout=10, what="the hung tmux to be ended")
    assert time.monotonic() - began < HARD_DEADLINE + 1.5
    assert state(roost, pane) == ""


@pytest.mark.alone  # timed against the hook's deadline
def test_stdin_that_never_closes_fails_open_within_800ms(roost: Roost, pane: str) -> None:
    env = {**roost.env, "TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    began = time.monotonic()
    with subprocess.Popen([str(BIN / "rosterd-hook")], stdin=subprocess.PIPE, env=env) as proc:
        assert proc.wait(timeout=10) == 0
        took = time.monotonic() - began
    assert took < BOUND, f"took {took:.3f}s"


def test_a_user_file_with_one_screen_rule_keeps_every_claude_event(roost: Roost, pane: str) -> None:
    """A user's claude.toml amends the packaged manifest: it does not replace it, so the bare
    ``rosterd-hook`` (Claude's) still maps every event."""
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    (agents / "claude.toml").write_text(
        '[[detect.rules]]\nid = "mine"\nstate = "working"\nregion = "screen"\npattern = "busy"\n'
    )
    hook(roost, pane, event("UserPromptSubmit"))
    assert state(roost, pane) == "working"
    hook(roost, pane, event("Stop", last_assistant_message="kept"))
    assert state(roost, pane) == "done"
    assert reply(roost, pane)["text"] == "kept"


@pytest.mark.alone  # timed against the hook's deadline
def test_a_broken_user_file_leaves_the_packaged_manifest_working(roost: Roost, pane: str) -> None:
    """A mistake in a user's file fails open: the hook uses the packaged manifest."""
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    (agents / "claude.toml").write_text('[hook.events]\nStop = "finished"\n')
    hook(roost, pane, event("UserPromptSubmit"))
    assert state(roost, pane) == "working"
    started = time.monotonic()
    proc = hook(roost, pane, event("Stop", last_assistant_message="kept"), settle=False)
    assert (proc.returncode, time.monotonic() - started < BOUND) == (0, True)
    settled(roost)
    assert state(roost, pane) == "done"


def test_bare_rosterd_hook_serves_the_manifest_that_says_default(roost: Roost, pane: str) -> None:
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    (agents / "claude.toml").write_text("[hook]\ndefault = false\n")
    (agents / "mytool.toml").write_text(
        'binaries = ["mytool"]\n[hook]\ndefault = true\n[hook.events]\nbegin = "prompt"\n'
    )
    hook(roost, pane, event("UserPromptSubmit"))
    assert state(roost, pane) == ""  # Claude's event: not mytool's
    hook(roost, pane, event("begin"))
    assert state(roost, pane) == "working"
    assert roost.option(pane, "@roost-harness") == "mytool"
