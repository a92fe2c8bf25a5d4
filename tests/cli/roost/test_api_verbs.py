"""``roost api …`` against a real daemon and fake agents in real panes: the output contract
(headered TSV, the eleven-field JSON row, one outcome word), every exit code, and proof from the
agent's input log that a refused prompt never reached the pane."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any

import pytest

from tests.api.agentpane import GENEROUS, AgentPane, start_agent
from tests.conftest import BIN, Roost
from tests.daemon import fixture
from tests.daemon.fixture import Daemon, pid_start_ticks

daemon, running = fixture.daemon, fixture.running  # the real daemon fixtures, for these tests

FIELDS = [
    "session_id",
    "agent_id",
    "state",
    "message",
    "status_epoch",
    "occupant_id",
    "source",
    "revision",
    "completed_revision",
    "updated_at",
    "promptable",
]
PROMPT_HEADER = "input\twritten_bytes\tcode\twait"


def env_of(daemon: Daemon) -> dict[str, str]:
    return {"XDG_RUNTIME_DIR": str(daemon.runtime)}


def api(
    roost: Roost, daemon: Daemon, *args: str, input: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    return roost.run("api", *args, input=input, env=env_of(daemon))


def background(roost: Roost, daemon: Daemon, *args: str) -> subprocess.Popen[str]:
    """``roost api ARGS`` left running, once the daemon shows it has registered its wait."""
    before = daemon.get("/status")["streams"]
    proc = subprocess.Popen(
        [str(BIN / "roost"), "api", *args],
        env={**roost.env, **env_of(daemon)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    roost.wait_for(lambda: daemon.get("/status")["streams"] > before, GENEROUS, "the wait registered")
    return proc


def finished(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def claim(daemon: Daemon, agent: AgentPane, **fields: Any) -> None:
    pid = agent.record()["pid"]
    with daemon.unix() as client:
        response = client.post("/claim", json={"pid": pid, "start_ticks": pid_start_ticks(pid), **fields})
    assert response.status_code == 200, response.text


def table(out: str) -> list[dict[str, str]]:
    header, *lines = out.splitlines()
    names = header.split("\t")
    return [dict(zip(names, line.split("\t"), strict=True)) for line in lines]


# agent-status and agents: headered TSV, and the eleven-field JSON row


def test_agent_status_prints_a_headered_tsv_row(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-status", agent.pane)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines()[0] == "\t".join(FIELDS)
    [row] = table(proc.stdout)
    assert row["session_id"] == agent.pane
    assert (row["agent_id"], row["state"], row["message"]) == ("claude", "idle", "-")
    assert (row["source"], row["promptable"], row["completed_revision"]) == ("integration", "true", "0")
    assert all(row[name].isdigit() for name in ("status_epoch", "occupant_id", "revision", "updated_at"))


def test_json_is_exactly_the_eleven_fields_with_their_types(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-status", agent.pane, "--json")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert len(proc.stdout.splitlines()) == 1
    row = json.loads(proc.stdout)
    assert list(row) == FIELDS
    assert row["session_id"] == agent.pane and row["agent_id"] == "claude"
    assert row["state"] == "idle" and row["message"] is None and row["source"] == "integration"
    for name in ("status_epoch", "occupant_id", "revision", "completed_revision", "updated_at"):
        assert type(row[name]) is int, name
    assert row["promptable"] is True
    assert abs(row["updated_at"] - time.time() * 1000) < 120_000  # milliseconds since the epoch


def test_agents_lists_rows_in_session_id_order_with_legacy_and_screen_sources(
    roost: Roost, running: Daemon
) -> None:
    hooked = start_agent(roost, running, name="hooked")
    screen = start_agent(roost, running, name="screen", state=None)
    legacy = start_agent(roost, running, name="legacy", state=None)
    claim(
        running, screen, source="screen", activity="blocked", fields={"pending": {"summary": "Allow\tit?\n"}}
    )
    claim(running, legacy, source="files", activity="working")
    for agent in (screen, legacy):
        agent.wait_row(lambda row: True, f"{agent.pane}'s row")
    proc = api(roost, running, "agents")
    assert (proc.returncode, proc.stderr) == (0, "")
    rows = {row["session_id"]: row for row in table(proc.stdout)}
    assert [int(pane[1:]) for pane in rows] == sorted(int(pane[1:]) for pane in rows)
    assert rows[hooked.pane]["source"] == "integration"
    assert (rows[screen.pane]["source"], rows[screen.pane]["state"]) == ("screen", "blocked")
    assert rows[screen.pane]["message"] == "Allow it?"  # one line, one cell
    assert (rows[legacy.pane]["source"], rows[legacy.pane]["promptable"]) == ("legacy", "false")
    doc = json.loads(api(roost, running, "agents", "--json").stdout)["agents"]
    by_pane = {row["session_id"]: row for row in doc}
    assert all(list(row) == FIELDS for row in doc)
    assert by_pane[legacy.pane]["source"] is None and by_pane[legacy.pane]["promptable"] is False
    assert by_pane[screen.pane]["message"] == "Allow\tit?\n"


def test_json_is_the_agents_route_body_byte_for_byte(roost: Roost, running: Daemon) -> None:
    """``--json`` prints what ``/agents`` (and ``/agents/SESSION``) answer, as sent, then a newline."""
    agent = start_agent(roost, running)
    start_agent(roost, running, name="other")
    with running.unix() as client:
        every = client.get("/agents").content
        one = client.get(f"/agents/{agent.pane}").content
    listed = subprocess.run(
        [str(BIN / "roost"), "api", "agents", "--json"],
        env={**roost.env, **env_of(running)},
        capture_output=True,
    )
    assert (listed.returncode, listed.stderr) == (0, b"")
    assert listed.stdout == every + b"\n"
    assert json.loads(every)["agents"][0]["session_id"] == agent.pane
    status = subprocess.run(
        [str(BIN / "roost"), "api", "agent-status", agent.pane, "--json"],
        env={**roost.env, **env_of(running)},
        capture_output=True,
    )
    assert (status.returncode, status.stdout) == (0, one + b"\n")


def test_a_missing_session_exits_2_and_a_missing_daemon_exits_2(roost: Roost, daemon: Daemon) -> None:
    proc = api(roost, daemon, "agents")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "rosterd is not running" in proc.stderr
    daemon.start()
    proc = api(roost, daemon, "agent-status", "%999")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "roost api: no session '%999'\n"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["bogus"],
        ["agent-status"],
        ["agent-status", "%1", "%2"],
        ["agents", "extra"],
        ["agent-status", "%1", "--jsn"],
    ],
)
def test_usage_errors_exit_1(roost: Roost, running: Daemon, args: list[str]) -> None:
    proc = api(roost, running, *args)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost api ")


def test_help_documents_every_exit_code(roost: Roost, running: Daemon) -> None:
    proc = api(roost, running, "help")
    assert (proc.returncode, proc.stderr) == (0, "")
    for code in ("0", "1", "2", "4"):
        assert f"\n      {code}  " in proc.stdout or f"exit  {code}  " in proc.stdout


# agent-wait: four outcomes, only matched exits 0


def test_wait_matched_at_once_when_the_state_already_holds(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-wait", agent.pane, "--until", "blocked,idle", "--timeout", "5s")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "matched\n", "")


def test_wait_sees_a_fast_transition_on_the_change_stream(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    waiting = background(roost, running, "agent-wait", agent.pane, "--until", "working", "--timeout", "30s")
    claim(running, agent, source="hook", activity="working")
    claim(running, agent, source="hook", activity="idle")  # working lasted no time at all
    assert finished(waiting) == (0, "matched\n", "")


def test_wait_timed_out(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    began = time.monotonic()
    proc = api(roost, running, "agent-wait", agent.pane, "--until", "working", "--timeout", "700ms")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "timed_out\n", "")
    assert time.monotonic() - began >= 0.7


def test_wait_occupant_changed(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, restarting=True)
    waiting = background(roost, running, "agent-wait", agent.pane, "--until", "working", "--timeout", "60s")
    os.kill(agent.record()["pid"], signal.SIGKILL)
    assert finished(waiting) == (1, "occupant_changed\n", "")


def test_wait_session_closed(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")
    agent = start_agent(roost, running)
    waiting = background(roost, running, "agent-wait", agent.pane, "--until", "working", "--timeout", "60s")
    roost.tmux("kill-pane", "-t", agent.pane)
    assert finished(waiting) == (1, "session_closed\n", "")


@pytest.mark.parametrize(
    "flags",
    [
        ["--until", "idle"],
        ["--timeout", "5s"],
        ["--until", "idle,idle", "--timeout", "5s"],
        ["--until", "done", "--timeout", "5s"],
        ["--until", "", "--timeout", "5s"],
        ["--until", "idle", "--timeout", "0ms"],
        ["--until", "idle", "--timeout", "301s"],
        ["--until", "idle", "--timeout", "1.5s"],
        ["--until", "idle", "--timeout", "1h"],
        ["--until", "idle", "--timeout", "5"],
    ],
)
def test_wait_usage_errors_exit_1(roost: Roost, running: Daemon, flags: list[str]) -> None:
    proc = api(roost, running, "agent-wait", "%0", *flags)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage:")


# agent-prompt: pinned, written once, or refused with nothing written


def test_prompt_accepted_and_matched(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    args = ("agent-prompt", agent.pane, "run it", "--wait", "--until", "idle", "--timeout", "30s")
    proc = api(roost, running, *args)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"{PROMPT_HEADER}\naccepted\t7\t-\tmatched\n"
    assert agent.received() == b"\x1b[200~run it\x1b[201~\r"


def test_prompt_without_wait_reports_no_wait(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-prompt", agent.pane, "--", "--not-a-flag")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{PROMPT_HEADER}\naccepted\t13\t-\t-\n", "")
    agent.wait_received(b"--not-a-flag\x1b[201~\r")


def test_prompt_accepted_but_not_matched_exits_1(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    args = ("agent-prompt", agent.pane, "hi", "--wait", "--until", "blocked", "--timeout", "3s")
    proc = api(roost, running, *args)
    assert (proc.returncode, proc.stdout) == (1, f"{PROMPT_HEADER}\naccepted\t3\t-\ttimed_out\n")


@pytest.mark.parametrize(
    "flags",
    [
        ["--wait"],
        ["--until", "idle"],
        ["--timeout", "5s"],
        ["--wait", "--until", "idle"],
        ["--wait", "--timeout", "1s"],
    ],
)
def test_prompt_wait_flags_are_all_or_none(roost: Roost, running: Daemon, flags: list[str]) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-prompt", agent.pane, "hello", *flags)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: --wait --until --timeout go together")
    agent.nothing_arrives(b"")


def test_prompt_oversized_text_is_refused_before_sending(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "agent-prompt", agent.pane, "x" * 16_385)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "roost api: TEXT is 16385 UTF-8 bytes, more than 16384; nothing was sent\n"
    proc = api(roost, running, "agent-prompt", agent.pane, "")
    assert (proc.returncode, proc.stdout) == (1, "")
    agent.nothing_arrives(b"")


def test_prompt_rejected_when_blocked(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    agent.state("blocked")
    agent.wait_row(lambda row: row["state"] == "blocked", "blocked")
    proc = api(
        roost, running, "agent-prompt", agent.pane, "1", "--wait", "--until", "idle", "--timeout", "5s"
    )
    assert (proc.returncode, proc.stdout) == (1, f"{PROMPT_HEADER}\nrejected\t0\tblocked\t-\n")
    assert proc.stderr.startswith("roost api: agent-prompt rejected: blocked: ")
    agent.nothing_arrives(b"")


def test_prompt_rejected_for_a_screen_row(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, state=None)
    claim(running, agent, source="screen", activity="idle", fields={"session_id": "s"})
    agent.wait_row(lambda row: row["source"] == "screen", "a screen row")
    proc = api(roost, running, "agent-prompt", agent.pane, "hello")
    assert (proc.returncode, proc.stdout) == (1, f"{PROMPT_HEADER}\nrejected\t0\tnot_promptable\t-\n")
    agent.nothing_arrives(b"")


def test_prompt_rejected_when_the_deadline_already_passed(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    args = ("agent-prompt", agent.pane, "late", "--wait", "--until", "idle", "--timeout", "1ms")
    proc = api(roost, running, *args)
    assert (proc.returncode, proc.stdout) == (1, f"{PROMPT_HEADER}\nrejected\t0\tdeadline_expired\t-\n")
    agent.nothing_arrives(b"")


def test_prompt_to_a_closed_session_exits_2(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")
    agent = start_agent(roost, running)
    roost.tmux("kill-pane", "-t", agent.pane)
    roost.wait_for(lambda: agent.row() is None, GENEROUS, "the roster noticed")
    proc = api(roost, running, "agent-prompt", agent.pane, "hello")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"roost api: no session '{agent.pane}'\n")


def test_prompt_ambiguous_when_the_write_outlives_the_deadline_exits_4(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    tmux_pid = int(roost.tmux("display-message", "-p", "#{pid}").strip())
    os.kill(tmux_pid, signal.SIGSTOP)
    try:
        args = ("agent-prompt", agent.pane, "maybe", "--wait", "--until", "idle", "--timeout", "2s")
        proc = api(roost, running, *args)
    finally:
        os.kill(tmux_pid, signal.SIGCONT)
    assert (proc.returncode, proc.stdout) == (4, f"{PROMPT_HEADER}\nambiguous\t6\t-\ttimed_out\n")
    assert "never send it again" in proc.stderr
    agent.wait_received(b"maybe")
    agent.nothing_arrives(agent.received())
    assert agent.received().count(b"maybe") == 1


def test_prompt_ambiguous_when_the_daemon_dies_after_admission_exits_4(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    args = ("agent-prompt", agent.pane, "and then", "--wait", "--until", "blocked", "--timeout", "60s")
    waiting = background(roost, running, *args)
    agent.wait_received(b"and then")
    running.stop(signal.SIGKILL)
    code, out, err = finished(waiting)
    assert (code, out) == (4, f"{PROMPT_HEADER}\nambiguous\t-\t-\t-\n")
    assert "may have arrived: never send it again" in err


# input: raw bytes, unfenced


def test_input_writes_raw_bytes_from_the_argument_or_stdin(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    proc = api(roost, running, "input", agent.pane, "a\nb")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    agent.wait_received(b"a\nb")
    proc = api(roost, running, "input", agent.pane, input=b"\x1b[Bc\r")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    agent.wait_received(b"c\r")
    assert agent.received() == b"a\nb\x1b[Bc\r"


def test_input_errors(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")
    proc = api(roost, running, "input", "%999", "x")
    assert (proc.returncode, proc.stderr) == (2, "roost api: no session '%999'\n")
    proc = api(roost, running, "input", "%0", input=b"x" * 65_537)
    assert (proc.returncode, proc.stderr) == (
        1,
        "roost api: input is 65537 bytes, more than 65536; nothing was sent\n",
    )
    proc = api(roost, running, "input", "%0", input=b"")
    assert proc.returncode == 1 and proc.stderr.startswith("usage:")


def test_the_prompt_text_is_never_in_the_daemon_log(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    secret = "cli-secret-prompt"
    assert api(roost, running, "agent-prompt", agent.pane, secret).returncode == 0
    agent.wait_row(lambda row: row["state"] == "idle" and row["completed_revision"] > 0, "the turn ended")
    agent.state("blocked")
    agent.wait_row(lambda row: row["state"] == "blocked", "blocked")
    assert api(roost, running, "agent-prompt", agent.pane, secret).returncode == 1
    running.stop()
    assert secret not in running.log.read_text(errors="replace")
