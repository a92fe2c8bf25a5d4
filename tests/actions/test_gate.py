"""The permission gate with a real daemon: ``rosterd-hook --gate`` run by a stand-in harness
(tests/fakes/gated_harness.py), answered through ``POST /sessions/{key}/permission``.

Each test walks one way a held request ends: an answer (allow, always, deny), the person
answering in the terminal (the harness ends the hook), the gate's time running out, no
daemon at all. The hook's own output is what the harness would act on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon, pid_start_ticks
from tests.mcpserver.client import ok, refused, unix

__all__ = ["daemon"]

HARNESS = Path(__file__).resolve().parents[1] / "fakes" / "gated_harness.py"
SUGGESTIONS = [
    {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
        "behavior": "allow",
        "destination": "localSettings",
    },
    {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
]
ALLOW = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}


def request(tool: str = "Bash", command: str = "touch x", suggestions: list | None = None) -> dict[str, Any]:
    return {
        "session_id": "11111111-2222-3333-4444-555555555555",
        "cwd": "/tmp",
        "hook_event_name": "PermissionRequest",
        "tool_name": tool,
        "tool_input": {"command": command},
        "permission_suggestions": suggestions or [],
    }


@dataclass
class Gated:
    """One stand-in harness and the request its gate holds."""

    daemon: Daemon
    where: Path
    proc: subprocess.Popen[bytes]

    def result(self, timeout: float = 10) -> dict[str, Any]:
        done = self.where / "result.json"
        self.daemon.wait_for(done.exists, timeout, "the gate hook to end")
        return json.loads(done.read_text())

    @property
    def hook_pid(self) -> int:
        return int((self.where / "hook.pid").read_text())

    def record(self) -> dict[str, Any]:
        found = self.daemon.record_where(lambda r: r["pid"] == self.proc.pid)
        assert found is not None
        return found

    def held(self) -> dict[str, Any]:
        """The session's record once its request is open and answerable."""
        return self.daemon.wait_for(
            lambda: (
                (r := self.daemon.record_where(lambda r: r["pid"] == self.proc.pid))
                and (r.get("pending") or {}).get("answerable")
                and r
            ),
            what="the gated request",
        )

    def answer(self, key: str, **body: Any) -> Any:
        with self.daemon.unix() as client:
            return client.post(f"/sessions/{key}/permission", json=body)


@pytest.fixture
def gate(roost: Roost, daemon: Daemon) -> Iterator[Any]:
    """Start a stand-in harness whose gate holds ``payload``; each is killed at the end."""
    made: list[subprocess.Popen[bytes]] = []

    def start(payload: dict[str, Any]) -> Gated:
        where = roost.root / f"gated{len(made)}"
        where.mkdir()
        (where / "payload.json").write_text(json.dumps(payload))
        proc = subprocess.Popen([sys.executable, str(HARNESS), str(where)], env=daemon.env)
        made.append(proc)
        return Gated(daemon, where, proc)

    yield start
    for proc in made:
        proc.kill()
        proc.wait(10)


def test_a_held_request_is_pending_and_answerable_with_its_options(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    gated = gate(request(suggestions=SUGGESTIONS))
    record = gated.held()
    pending = record["pending"]
    assert (record["activity"], record["activity_event"], record["harness"]) == (
        "needs_attention",
        "PermissionRequest",
        "claude",
    )
    assert (pending["kind"], pending["tool"], pending["summary"]) == ("permission", "Bash", "Bash: touch x")
    assert [o["kind"] for o in pending["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert pending["answerable"] is True
    assert pending["opened_at"].endswith("Z") and len(pending["id"]) == 16
    assert not (gated.where / "result.json").exists()  # still held
    answered = gated.answer(record["session_key"], option="allow", request_id=pending["id"])
    assert answered.status_code == 200, answered.text
    after = answered.json()["record"]
    assert (after["activity"], after["activity_event"], after["pending"]) == (
        "active",
        "permission_answered",
        None,
    )
    result = gated.result()
    assert result["returncode"] == 0
    assert json.loads(result["stdout"]) == ALLOW
    # The journal keeps who answered and from where, and nothing of what was asked.
    entries = daemon.get("/journal")["entries"]
    answers = [e for e in entries if e["kind"] == "answer"]
    assert [(e["session_key"], e["answer"], e["by"], e["via"]) for e in answers] == [
        (record["session_key"], "allow", "local user", "api")
    ]
    assert "touch x" not in json.dumps(entries)


def test_always_grants_the_suggested_rules_but_never_a_mode(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    gated = gate(request(suggestions=SUGGESTIONS))
    key = gated.held()["session_key"]
    assert gated.answer(key, option="allow_always").status_code == 200
    decision = json.loads(gated.result()["stdout"])["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow", "updatedPermissions": [SUGGESTIONS[0]]}


def test_a_deny_carries_its_reason(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    gated = gate(request())
    key = gated.held()["session_key"]
    with daemon.tcp(daemon.token) as client:  # a tool with the loopback token
        answered = client.post(
            f"/sessions/{key}/permission", json={"option": "reject", "reason": "not on main"}
        )
    assert answered.status_code == 200, answered.text
    decision = json.loads(gated.result()["stdout"])["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "not on main"}
    [entry] = [e for e in daemon.get("/journal")["entries"] if e["kind"] == "answer"]
    assert (entry["answer"], entry["by"], entry["via"]) == ("reject", "token holder", "api")
    assert "not on main" not in json.dumps(entry)


def test_stale_and_impossible_answers_are_refused_and_change_nothing(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    gated = gate(request())  # no suggestions: no "always"
    record = gated.held()
    key, pending = record["session_key"], record["pending"]
    assert [o["kind"] for o in pending["options"]] == ["allow_once", "reject_once"]
    refusals = [
        ({"option": "allow_always"}, "no_such_option"),
        ({"option": "allow", "request_id": "0" * 16}, "request_changed"),
        ({"option": "allow", "occupant_id": record["occupant_id"] + 1}, "occupant_changed"),
        ({"option": "allow", "status_epoch": record["status_epoch"] + 1}, "status_epoch_changed"),
    ]
    for body, code in refusals:
        answer = gated.answer(key, **body)
        assert (answer.status_code, answer.json()["code"]) == (409, code), body
        assert gated.record()["pending"] == pending
        assert not (gated.where / "result.json").exists()
    for body, field in (
        ({"option": "maybe"}, "option"),
        ({"option": "allow", "request_id": ""}, "request_id"),
    ):
        answer = gated.answer(key, **body)
        assert (answer.status_code, answer.json()["field"]) == (400, field)
    assert gated.answer(key, option="reject", request_id=pending["id"]).status_code == 200
    again = gated.answer(key, option="allow", request_id=pending["id"])
    assert (again.status_code, again.json()["code"]) == (409, "nothing_pending")
    assert json.loads(gated.result()["stdout"])["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_answered_in_the_terminal_the_hook_ends_and_the_api_is_sent_there(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    gated = gate(request())
    key = gated.held()["session_key"]
    os.kill(gated.hook_pid, signal.SIGKILL)  # Claude ends the hook when the dialog is answered
    record = daemon.wait_for(
        lambda: (r := gated.record())["pending"] and not r["pending"]["answerable"] and r,
        what="the request no longer answerable",
    )
    assert record["pending"]["options"] == []
    answer = gated.answer(key, option="allow")
    assert (answer.status_code, answer.json()["code"]) == (409, "answer_in_terminal")
    assert answer.json()["error"].startswith("answer it in the terminal")


@pytest.mark.alone  # a bound on time
def test_when_the_gate_times_out_the_dialog_decides(daemon: Daemon, gate: Any) -> None:
    daemon.settings["harness.claude"] = {"gate_timeout_s": 1}
    daemon.start()
    gated = gate(request())
    gated.held()
    result = gated.result(timeout=10)
    assert (result["returncode"], result["stdout"]) == (0, "")  # nothing decided
    assert 0.9 < result["seconds"] < 5
    record = gated.record()
    assert record["activity"] == "needs_attention"  # the dialog is still on screen
    assert record["pending"]["answerable"] is False


@pytest.mark.alone  # a bound on time
def test_with_no_daemon_the_gate_gives_way_at_once(roost: Roost, daemon: Daemon, gate: Any) -> None:
    gated = gate(request())  # the daemon was never started
    result = gated.result()
    assert (result["returncode"], result["stdout"]) == (0, "")
    assert result["seconds"] < 0.8


def test_a_question_is_not_held(daemon: Daemon, gate: Any) -> None:
    daemon.start()
    asked = request(tool="AskUserQuestion")
    asked["tool_input"] = {"questions": [{"question": "Which colour?"}]}
    gated = gate(asked)
    result = gated.result()
    assert (result["returncode"], result["stdout"]) == (0, "")
    record = daemon.wait_for(gated.record, what="the question's claim")
    assert record["activity"] == "needs_attention"
    assert record["pending"]["answerable"] is False
    assert record["pending"]["summary"] == "AskUserQuestion: Which colour?"


def test_a_pane_with_no_gate_is_sent_to_its_terminal(daemon: Daemon) -> None:
    daemon.start()
    me, ticks = os.getpid(), pid_start_ticks(os.getpid())
    with daemon.unix() as client:
        claimed = client.post(
            "/claim",
            json={
                "pid": me,
                "start_ticks": ticks,
                "activity": "blocked",
                "fields": {"harness": "codex", "pending": {"summary": "Bash: touch x"}},
            },
        )
        assert claimed.status_code == 200, claimed.text
        key = claimed.json()["session_key"]
        answer = client.post(f"/sessions/{key}/permission", json={"option": "allow"})
        assert (answer.status_code, answer.json()["code"]) == (409, "answer_in_terminal")
        assert "codex asks in its terminal and offers rosterd no gate" in answer.json()["error"]
        for name in ("answerable", "id"):
            forged = client.post(
                "/claim",
                json={
                    "pid": me,
                    "start_ticks": ticks,
                    "activity": "blocked",
                    "fields": {"pending": {name: True}},
                },
            )
            assert (forged.status_code, forged.json()["field"]) == (400, f"fields.pending.{name}")


def test_gate_bodies_that_are_not_a_held_request_are_refused(daemon: Daemon) -> None:
    daemon.start()
    me = {"pid": os.getpid(), "start_ticks": pid_start_ticks(os.getpid())}
    bad = [
        ({"claim": {**me, "activity": "working", "fields": {}}}, "claim"),
        (
            {"claim": {**me, "source": "screen", "activity": "blocked", "fields": {"pending": {}}}},
            "claim",
        ),
        (
            {"claim": {**me, "activity": "blocked", "fields": {"pending": {"answerable": True}}}},
            "claim.fields.pending.answerable",
        ),
        ({"claim": {"pid": "x"}}, "claim.pid"),
        ({"claim": {}, "always": "yes"}, "always"),
        ({"always": True}, "claim"),
    ]
    with daemon.unix() as client:
        for body, field in bad:
            answer = client.post("/gate", json=body)
            assert (answer.status_code, answer.json().get("field")) == (400, field), (body, answer.text)
    # Every claim named this process; agents elsewhere on the machine are sessions of their own.
    assert [r for r in daemon.snapshot()["records"] if r["pid"] == os.getpid()] == []


def test_mcp_answers_a_gated_request_and_the_journal_says_so(daemon: Daemon, gate: Any) -> None:
    """session.allow and session.deny go through the same contract: a stale one is refused."""
    daemon.start()
    gated = gate(request())
    record = gated.held()
    key, pending = record["session_key"], record["pending"]
    stale = refused(unix(daemon), "session.allow", name=key, request_id="0" * 16)
    assert (stale["status"], stale["code"]) == (409, "request_changed")
    denied = ok(unix(daemon), "session.deny", name=key, reason="ask me tomorrow", request_id=pending["id"])
    assert denied["record"]["activity_event"] == "permission_answered"
    decision = json.loads(gated.result()["stdout"])["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "ask me tomorrow"}
    [entry] = [e for e in daemon.get("/journal")["entries"] if e["kind"] == "answer"]
    assert (entry["answer"], entry["by"], entry["via"]) == ("reject", f"pid {os.getpid()}", "mcp")


def test_a_claude_pane_whose_gate_is_off_is_told_the_command_that_turns_it_on(
    roost: Roost, daemon: Daemon
) -> None:
    daemon.start()
    me, ticks = os.getpid(), pid_start_ticks(os.getpid())
    turn_on = "rosterd integrate install claude --gate"
    assert daemon.get("/gates") == {"gates": {"claude": turn_on}}  # no hooks here yet
    with daemon.unix() as client:
        claimed = client.post(
            "/claim",
            json={
                "pid": me,
                "start_ticks": ticks,
                "activity": "blocked",
                "fields": {"harness": "claude", "pending": {"summary": "Bash: touch x"}},
            },
        )
        assert claimed.status_code == 200, claimed.text
        key = claimed.json()["session_key"]
        answer = client.post(f"/sessions/{key}/permission", json={"option": "allow"})
        assert (answer.status_code, answer.json()["code"]) == (409, "answer_in_terminal")
        assert (
            answer.json()["error"]
            == f"answer it in the terminal: claude's gate is off (`{turn_on}` turns it on)"
        )
        installed = subprocess.run(
            [str(BIN / "rosterd"), *turn_on.split()[1:]], env=daemon.env, capture_output=True, text=True
        )
        assert installed.returncode == 0, installed.stderr
        assert daemon.get("/gates") == {"gates": {"claude": None}}  # read anew, no restart
        # On now, but this request was never held: only its terminal can answer it still.
        again = client.post(f"/sessions/{key}/permission", json={"option": "allow"})
        assert again.json()["error"] == "answer it in the terminal: its gate let go of the request"
