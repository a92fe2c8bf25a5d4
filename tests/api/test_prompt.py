"""``POST /sessions/{key}/prompt`` against a real daemon and a fake agent in a real pane.

Every pre-write rejection is proven with the agent's input log: not one byte arrived. The
happy path is proven the same way: the text arrived once, encoded as a composer pastes it.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from tests.api.agentpane import GENEROUS, AgentPane, pins, start_agent
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, pid_start_ticks

START, END = b"\x1b[200~", b"\x1b[201~"


def now_ms() -> int:
    return round(time.time() * 1000)


def rejected(agent: AgentPane, body: dict[str, Any], code: str, before: bytes) -> dict[str, Any]:
    """The prompt is refused with ``code`` and the agent's log does not change."""
    response = agent.post("/prompt", body)
    assert response.status_code == 409, response.text
    doc = response.json()
    assert (doc["input"], doc["code"], doc["written_bytes"]) == ("rejected", code, 0), doc
    assert doc["reason"].startswith(code) and len(doc["reason"]) <= 200
    assert "wait" not in doc
    agent.nothing_arrives(before)
    return doc


def keep_server(roost: Roost) -> None:
    """A second session, so closing the agent's pane does not end the tmux server too."""
    roost.start("sleep 600", session="keep")


# The happy path: once, bracketed, one Enter


def test_text_arrives_once_bracketed_with_one_enter(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    response = agent.post("/prompt", pins(agent.row() or {}, "run the tests"))
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc == {
        "session_id": agent.pane,
        "input": "accepted",
        "code": None,
        "reason": None,
        "written_bytes": len("run the tests") + 1,
    }
    agent.wait_received(b"\r")
    assert agent.received() == START + b"run the tests" + END + b"\r"
    agent.wait_row(lambda row: row["state"] == "working", "the turn began")
    agent.nothing_arrives(agent.received())  # never written a second time


def test_no_markers_when_the_program_did_not_ask_for_bracketed_paste(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, "--no-bracketed-paste")
    response = agent.post("/prompt", pins(agent.row() or {}, "plain"))
    assert response.status_code == 200, response.text
    agent.wait_received(b"\r")
    assert agent.received() == b"plain\r"
    # What Roost wrote, the same figure as for a program that asked for bracketed paste (where
    # tmux adds 12 bytes of markers it does not report): docs/contracts.md says why.
    assert response.json()["written_bytes"] == len("plain") + 1


def test_esc_is_stripped_and_newlines_are_normalised(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    text = "one\r\ntwo\rthree\nfour \x1b[31mred\x1b[0m \x1b[201~typed?\x1b[200~ end"
    response = agent.post("/prompt", pins(agent.row() or {}, text))
    assert response.status_code == 200, response.text
    encoded = b"one\rtwo\rthree\rfour [31mred[0m typed? end"
    assert response.json()["written_bytes"] == len(encoded) + 1
    agent.wait_received(END + b"\r")
    assert agent.received() == START + encoded + END + b"\r"


def test_the_longest_text_arrives_whole(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    text = "é" * 8191 + "xy"  # 16,384 UTF-8 bytes
    response = agent.post("/prompt", pins(agent.row() or {}, text))
    assert response.status_code == 200, response.text
    assert response.json()["written_bytes"] == 16_385 <= 16_397
    agent.wait_received(END + b"\r")
    assert agent.received() == START + text.encode() + END + b"\r"


def test_a_wait_reports_the_turn_the_prompt_started(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    body = pins(row, "go", deadline_ms=now_ms() + 30_000, wait={"until": ["idle"]})
    response = agent.post("/prompt", body)
    assert response.status_code == 200, response.text
    doc = response.json()
    assert (doc["input"], doc["wait"]["outcome"]) == ("accepted", "matched")
    # matched on the idle the turn ended in, not on the idle the prompt was sent into
    assert doc["wait"]["row"]["state"] == "idle"
    assert doc["wait"]["row"]["completed_revision"] > row["revision"]


# Pre-write rejections: no byte reaches the pane


def test_a_replaced_occupant_is_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, restarting=True)
    row = agent.row() or {}
    os.kill(agent.record()["pid"], signal.SIGKILL)  # the pane's loop starts a new agent process
    agent.wait_row(lambda now: now["occupant_id"] != row["occupant_id"], "a new occupant's row")
    rejected(agent, pins(row), "occupant_changed", agent.received())


def test_a_newer_revision_is_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    agent.state("working")
    agent.wait_row(lambda now: now["state"] == "working", "working")
    rejected(agent, pins(row), "revision_changed", agent.received())


def test_a_changed_status_epoch_is_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    running.stop()
    running.start()
    now = agent.wait_row(lambda now: now["status_epoch"] != row["status_epoch"], "the new daemon's row")
    assert now["promptable"]
    rejected(agent, pins(row), "status_epoch_changed", agent.received())


def test_a_blocked_agent_is_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, "--dialog-on", "deploy")
    assert agent.post("/prompt", pins(agent.row() or {}, "please deploy")).status_code == 200
    blocked = agent.wait_row(lambda now: now["state"] == "blocked", "the dialog")
    assert blocked["promptable"] and blocked["message"]
    rejected(agent, pins(blocked, "1"), "blocked", agent.received())


def test_a_screen_only_row_is_readable_but_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, state=None)
    record = agent.record()
    claim = {
        "source": "screen",
        "pid": record["pid"],
        "start_ticks": pid_start_ticks(record["pid"]),
        "activity": "working",
        "event": "esc-to-interrupt",
        "fields": {"session_id": "seen-on-screen"},
    }
    with running.unix() as client:
        assert client.post("/claim", json=claim).status_code == 200
    row = agent.wait_row(lambda now: now["source"] == "screen", "a screen row")
    assert (row["state"], row["agent_id"], row["promptable"]) == ("working", "claude", False)
    rejected(agent, pins(row), "not_promptable", agent.received())


def test_a_closed_pane_is_refused_whether_or_not_the_roster_noticed_yet(
    roost: Roost, running: Daemon
) -> None:
    keep_server(roost)
    first = start_agent(roost, running, name="first")
    second = start_agent(roost, running, name="second")
    rows = [first.row() or {}, second.row() or {}]
    roost.tmux("kill-pane", "-t", first.pane)
    rejected(first, pins(rows[0]), "session_closed", first.received())  # likely tmux says so at the write
    roost.tmux("kill-pane", "-t", second.pane)
    roost.wait_for(lambda: second.row() is None, GENEROUS, "the roster noticed")
    rejected(second, pins(rows[1]), "session_closed", second.received())


def test_an_expired_deadline_is_refused(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    body = pins(agent.row() or {}, deadline_ms=now_ms() - 1, wait={"until": ["idle"]})
    rejected(agent, body, "deadline_expired", agent.received())


# Malformed requests: refused before anything is checked or written


@pytest.mark.parametrize(
    ("change", "status", "error"),
    [
        ({"text": "x" * 16_385}, 413, "more than 16384"),
        ({"text": "é" * 8193}, 413, "more than 16384"),
        ({"text": ""}, 400, "nonempty"),
        ({"text": "\x1b"}, 400, "empty once"),
        ({"revision": None}, 400, "revision"),
        ({"occupant_id": 0}, 400, "occupant_id"),
        ({"wait": {"until": ["idle"]}}, 400, "deadline_ms"),
        ({"wait": {"until": ["idle", "idle"]}, "deadline_ms": 1}, 400, "distinct"),
        ({"wait": {"until": []}, "deadline_ms": 1}, 400, "nonempty"),
        ({"deadline_ms": 2**53}, 400, "five minutes"),
    ],
)
def test_malformed_prompts_are_refused_before_the_pane(
    roost: Roost, running: Daemon, change: dict[str, Any], status: int, error: str
) -> None:
    agent = start_agent(roost, running)
    response = agent.post("/prompt", {**pins(agent.row() or {}), **change})
    assert response.status_code == status, response.text
    assert error in response.json()["error"]
    agent.nothing_arrives(agent.received())


def test_a_pane_that_does_not_exist_is_closed_and_an_unknown_name_not_found(running: Daemon) -> None:
    body = {
        "text": "x",
        "status_epoch": running.get("/status")["status_epoch"],
        "occupant_id": 1,
        "revision": 1,
    }
    with running.unix() as client:
        response = client.post("/sessions/%25999/prompt", json=body)
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "session_closed"
        response = client.post("/sessions/no-such-name/prompt", json=body)
        assert response.status_code == 404, response.text


# Ambiguity: a write that outlives its deadline is reported, never retried


def test_a_write_past_its_deadline_is_ambiguous_and_never_retried(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    tmux_pid = int(roost.tmux("display-message", "-p", "#{pid}").strip())
    body = pins(agent.row() or {}, "maybe", deadline_ms=now_ms() + 2000)
    os.kill(tmux_pid, signal.SIGSTOP)  # the write will hang inside tmux, after admission
    try:
        response = agent.post("/prompt", body)
    finally:
        os.kill(tmux_pid, signal.SIGCONT)
    assert response.status_code == 200, response.text
    doc = response.json()
    assert (doc["input"], doc["code"], doc["written_bytes"]) == ("ambiguous", None, len("maybe") + 1)
    assert "not retried" in doc["reason"]
    agent.wait_received(b"maybe")  # the hung write went through once tmux ran again
    agent.nothing_arrives(agent.received())
    assert agent.received() == START + b"maybe" + END + b"\r"


# Nothing of the text is kept anywhere


def test_the_text_is_never_logged_or_left_in_a_buffer(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    secret = "s3cret-prompt-text"
    row = agent.row() or {}
    assert agent.post("/prompt", pins(row, secret)).status_code == 200
    agent.wait_received(secret.encode())
    agent.wait_row(lambda now: now["state"] == "working", "the turn began")
    agent.post("/prompt", pins(row, secret))  # rejected: the revision moved on
    agent.post("/prompt", pins(row, secret * 1000))  # too long
    agent.post("/prompt", pins(row, secret, deadline_ms=now_ms() - 1))
    running.stop()
    assert secret not in running.log.read_text(errors="replace")
    assert roost.tmux("list-buffers") == ""
