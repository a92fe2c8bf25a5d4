"""Integration reports against a real daemon: reporters are real processes in real panes, and
the daemon learns who they are from the kernel (SO_PEERCRED), never from what they write.

The fake agent (tests/fakes/reporter.py) runs in a pane as a known agent (``ROOST_AGENT=pi``)
and sends reports as itself when the test asks it to over a control socket. The lease test
runs the listener in this process over the roster's injected clock, so 30 s pass instantly.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from roost.agents.manifest import load_all
from roost.daemon import listen
from roost.pane.tmux.server import Server
from roost.truth.detect.attest import Attestor
from roost.truth.detect.identify import Names
from roost.truth.detect.selfreports import LINE_LIMIT, Reports
from roost.truth.roster import Claim, ProcessId, Roster
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import HOOK
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, pid_start_ticks

REPORTER = Path(__file__).parent.parent / "fakes" / "reporter.py"
GENEROUS = 15.0


@dataclass
class Agent:
    """A fake agent in a pane, reporting as itself on request."""

    pane: str
    pid: int
    session: str
    reports: str
    control: Path

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(GENEROUS)
            conn.connect(str(self.control))
            with conn.makefile("rwb") as stream:
                stream.write(json.dumps(request).encode() + b"\n")
                stream.flush()
                answer: dict[str, Any] = json.loads(stream.readline())
                return answer

    def send(self, *lines: dict[str, Any] | str, child: bool = False) -> list[dict[str, Any]]:
        """Every line on one connection, from the agent itself (or a child of it)."""
        text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
        replies: list[dict[str, Any]] = self.call({"op": "send", "lines": text, "child": child})["replies"]
        return replies

    def report(self, seq: int, activity: str = "blocked", event: str = "ask", **extra: Any) -> dict[str, Any]:
        return {"session": self.session, "activity": activity, "event": event, "seq": seq, **extra}


@pytest.fixture
def controls() -> Iterator[Path]:
    """A short directory for control sockets (a unix socket path must fit in 108 bytes)."""
    found = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))
    yield found
    for leftover in found.iterdir():
        leftover.unlink()
    found.rmdir()


def start_agent(
    roost: Roost, runtime: Path, controls: Path, name: str, program: str = "", then: str = ""
) -> Agent:
    """A reporter in a new session, its pane opened by roost with the runtime dir ``runtime``:
    ``program`` (default: the fake as ``ROOST_AGENT=pi``), then the shell line ``then``."""
    control = controls / f"{name}.sock"
    program = program or f"env ROOST_AGENT=pi {sys.executable} {REPORTER}"
    command = f"{program} --control {control}{then}"
    proc = roost.run("new", "-d", "-s", name, command, env={"XDG_RUNTIME_DIR": str(runtime)})
    assert proc.returncode == 0, proc.stderr
    pane = proc.stdout.strip()
    roost.wait_for(control.exists, GENEROUS, f"{name}'s control socket")
    agent = Agent(pane, 0, "", "", control)
    env = agent.call({"op": "env"})
    agent.pid, agent.session, agent.reports = env["pid"], env["session"], env["reports"]
    assert agent.session and agent.reports == str(runtime / "roost" / "reports.sock")
    return agent


def known(daemon: Daemon, agent: Agent) -> dict[str, Any]:
    """The agent's session once the daemon's scan has found it in its pane."""
    found: dict[str, Any] = daemon.wait_for(
        lambda: daemon.record_where(
            lambda r: r["pid"] == agent.pid and (r.get("tmux") or {}).get("pane") == agent.pane
        ),
        GENEROUS,
        f"the scan to find {agent.pane}",
    )
    return found


def explain(daemon: Daemon, key: str) -> dict[str, Any]:
    view: dict[str, Any] = daemon.get(f"/sessions/{key}/explain")
    return view


def refusals(daemon: Daemon, key: str) -> list[str]:
    return [
        entry["reason"]
        for entry in explain(daemon, key)["rejected"]
        if entry["claim"]["source"] == "integration"
    ]


def counts(daemon: Daemon) -> dict[str, Any]:
    found: dict[str, Any] = daemon.get("/status")["reports"]["counts"]
    return found


def send_from_here(path: str, *lines: bytes) -> list[dict[str, Any]]:
    """Lines sent by this test process, which is in no pane's process tree."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(GENEROUS)
        conn.connect(path)
        conn.sendall(b"".join(line + b"\n" for line in lines))
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.decode().splitlines()]


def test_the_reports_socket_is_private_and_shown_in_status(running: Daemon) -> None:
    path = running.runtime / "roost" / "reports.sock"
    mode = path.stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    reports = running.get("/status")["reports"]
    assert reports == {"unix": str(path), "counts": {"accepted": 0, "rejected": 0, "rejected_by": {}}}


def test_a_report_from_the_panes_agent_is_accepted_as_integration(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    agent = start_agent(roost, running.runtime, controls, "rep")
    # A pid in the report is ignored: who reports is the kernel's word.
    [reply] = agent.send(agent.report(1, message="waiting on you", pid=1, start_ticks=1))
    assert reply["accepted"] is True, reply
    key = reply["session_key"]
    record = running.get(f"/sessions/{key}")
    assert (record["pid"], record["start_ticks"]) == (agent.pid, pid_start_ticks(agent.pid))
    assert (record["activity"], record["activity_event"]) == ("needs_attention", "ask")
    assert (record["pending"]["summary"], record["pending"]["answerable"]) == ("waiting on you", False)
    assert record["harness"] == "pi"
    assert "integration" in record["sources"]
    view = explain(running, key)
    assert view["fields"]["activity"]["source"] == "integration"
    assert view["leases"]["integration"]["expired"] is False
    assert view["sequences"]["integration"] == 1
    # A second connection, one line again; an error keeps its message as the reason.
    [reply] = agent.send(agent.report(2, activity="error", event="retry-exhausted", message="API 529"))
    assert reply == {"accepted": True, "session_key": key, "reasons": []}
    record = running.get(f"/sessions/{key}")
    assert (record["activity"], record["error_reason"], record["pending"]) == ("idle", "API 529", None)
    assert counts(running) == {"accepted": 2, "rejected": 0, "rejected_by": {}}


def test_a_report_from_a_process_outside_the_sessions_tree_is_refused(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    agent = start_agent(roost, running.runtime, controls, "rep")
    key = known(running, agent)["session_key"]
    line = json.dumps(agent.report(1)).encode()
    [reply] = send_from_here(agent.reports, line)
    reason = f"process {os.getpid()} is not in the process tree of pane {agent.pane}"
    assert reply == {"accepted": False, "session_key": key, "reason": reason}
    assert refusals(running, key) == [reason]
    entry = explain(running, key)["rejected"][-1]
    assert (entry["claim"]["seq"], entry["claim"]["activity"], entry["claim"]["event"]) == (
        1,
        "blocked",
        "ask",
    )
    assert running.get(f"/sessions/{key}")["activity"] != "needs_attention"
    assert counts(running) == {"accepted": 0, "rejected": 1, "rejected_by": {"unproven": 1}}


def test_a_process_the_agent_started_is_not_the_agent(roost: Roost, running: Daemon, controls: Path) -> None:
    """The child inherited the pane's id and even ROOST_AGENT; only the agent itself reports."""
    agent = start_agent(roost, running.runtime, controls, "rep")
    key = known(running, agent)["session_key"]
    [reply] = agent.send(agent.report(1), child=True)
    assert reply["accepted"] is False
    assert reply["reason"].startswith("process ")
    assert f"runs under agent process {agent.pid} (pi)" in reply["reason"]
    assert refusals(running, key) == [reply["reason"]]


def test_a_report_naming_another_sessions_id_is_refused(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    mine = start_agent(roost, running.runtime, controls, "mine")
    theirs = start_agent(roost, running.runtime, controls, "theirs")
    mine_key, theirs_key = known(running, mine)["session_key"], known(running, theirs)["session_key"]
    [reply] = mine.send({**mine.report(1), "session": theirs.session})
    reason = f"process {mine.pid} is not in the process tree of pane {theirs.pane}"
    assert reply == {"accepted": False, "session_key": theirs_key, "reason": reason}
    assert refusals(running, theirs_key) == [reason]
    assert refusals(running, mine_key) == []
    for key in (mine_key, theirs_key):
        assert "integration" not in running.get(f"/sessions/{key}")["sources"]
    [reply] = mine.send({**mine.report(2), "session": "no-such-session"})
    assert reply["reason"] == "no live pane holds session no-such-session"
    assert reply["session_key"] == mine_key  # a refusal naming no pane is told to the sender's session


def test_an_agent_under_a_shell_the_scan_names_after_it_reports_for_the_pane(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    """``sh -c 'pi …; true'`` stays as the pane's process and the scan calls it pi; the agent
    below it is still the one that reports, into the pane's session."""
    script = controls / "pi"
    script.write_text(
        f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(REPORTER)!r}, run_name='__main__')\n"
    )
    script.chmod(0o755)
    agent = start_agent(roost, running.runtime, controls, "wrapped", program=str(script), then="; true")
    shell = int(roost.option(agent.pane, "pane_pid"))
    assert shell != agent.pid
    record = running.wait_for(
        lambda: running.record_where(lambda r: (r.get("tmux") or {}).get("pane") == agent.pane), GENEROUS
    )
    assert (record["pid"], record["harness"]) == (shell, "pi")  # the scan's occupant is the shell
    [reply] = agent.send(agent.report(1))
    assert reply["accepted"] is True, reply
    assert reply["session_key"] == record["session_key"]
    assert running.get(f"/sessions/{record['session_key']}")["activity"] == "needs_attention"


def padded(report: dict[str, Any], size: int) -> str:
    """The report as a JSON line of exactly ``size`` bytes."""
    bare = json.dumps({**report, "pad": ""})
    return json.dumps({**report, "pad": " " * (size - len(bare))})


def test_a_line_longer_than_4_KiB_is_refused_and_the_connection_closed(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    agent = start_agent(roost, running.runtime, controls, "rep")
    key = known(running, agent)["session_key"]
    too_long = padded(agent.report(1), LINE_LIMIT + 1)
    replies = agent.send(too_long, agent.report(2))
    reason = f"a report line is longer than {LINE_LIMIT} bytes; closing the connection"
    assert replies == [{"accepted": False, "session_key": key, "reason": reason}]  # the second never read
    assert "integration" not in running.get(f"/sessions/{key}")["sources"]
    assert refusals(running, key) == [reason]
    [reply] = agent.send(padded(agent.report(3), LINE_LIMIT))
    assert reply["accepted"] is True, reply
    assert counts(running)["rejected_by"] == {"too_long": 1}


def test_a_line_that_is_not_a_report_is_refused_and_the_next_one_read(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    agent = start_agent(roost, running.runtime, controls, "rep")
    key = known(running, agent)["session_key"]
    deep = "[" * 1500 + "]" * 1500  # Python's parser would recurse past its limit on it
    bad_json, bad_word, no_seq, too_deep = agent.send(
        "{not json", agent.report(1, activity="sleeping"), {**agent.report(1), "seq": "1"}, deep
    )
    assert bad_json["accepted"] is False and bad_json["reason"].startswith("the report is not JSON")
    assert bad_word["reason"].startswith("activity must be one of")
    assert no_seq["reason"] == "seq must be a non-negative integer, increasing with every report"
    assert too_deep["reason"] == "a report nests arrays and objects at most 32 deep"
    assert {bad_json["session_key"], bad_word["session_key"]} == {key}  # told to the sender's session
    [accepted] = agent.send(agent.report(1))
    assert accepted["accepted"] is True
    reasons = [bad_json["reason"], bad_word["reason"], no_seq["reason"], too_deep["reason"]]
    assert refusals(running, key) == reasons
    assert counts(running)["rejected_by"] == {"not_json": 1, "malformed": 3}


def test_reports_are_taken_in_arrival_order_and_seq_refuses_the_stale(
    roost: Roost, running: Daemon, controls: Path
) -> None:
    agent = start_agent(roost, running.runtime, controls, "rep")
    replies = agent.send(
        agent.report(5, activity="working", event="turn"),
        agent.report(3, activity="blocked", event="late"),
        agent.report(5, activity="idle", event="again"),
        agent.report(6, activity="idle", event="done"),
    )
    assert [reply["accepted"] for reply in replies] == [True, False, False, True]
    assert replies[1]["reason"] == "out of order: integration seq 3 is older than 5"
    assert replies[2]["reason"] == "replayed: integration seq 5 was already applied"
    key = replies[0]["session_key"]
    record = running.get(f"/sessions/{key}")
    assert (record["activity"], record["activity_event"]) == ("idle", "done")
    assert record["completed_revision"] is not None  # working -> idle completed a turn
    assert explain(running, key)["sequences"]["integration"] == 6
    assert refusals(running, key) == [replies[1]["reason"], replies[2]["reason"]]
    assert counts(running)["rejected_by"] == {"refused": 2}


def test_a_silent_integration_falls_back_after_its_30_s_lease(roost: Roost, controls: Path) -> None:
    """The listener in this process over an injected clock: the lease ends without waiting 30 s."""
    runtime = Path(tempfile.mkdtemp(prefix="rr", dir="/tmp"))
    runtime.chmod(0o700)
    agent = start_agent(roost, runtime, controls, "rep")
    now = [time.time()]

    def clock() -> float:
        return now[0]

    roster = Roster("test", "node", clock)
    process = ProcessId(agent.pid, pid_start_ticks(agent.pid))

    async def scenario() -> None:
        live = Live(roster, clock)
        attestor = Attestor(Server(roost.socket), Names(load_all().values()))
        server = await Reports(roster, live.apply, attestor, clock).serve(listen.unix(Path(agent.reports)))
        try:
            hooked = live.apply(Claim(HOOK, clock(), process=process, activity="working", event="prompt"))
            key = hooked.session_key
            assert key is not None
            [reply] = await asyncio.to_thread(agent.send, agent.report(1))
            assert reply["accepted"] is True and reply["session_key"] == key
            assert roster.record(key).activity == "needs_attention"  # type: ignore[union-attr]
            now[0] += 29.9
            roster.tick()
            assert roster.record(key).activity == "needs_attention"  # type: ignore[union-attr]
            now[0] += 0.1
            roster.tick()
            record = roster.record(key)
            assert record is not None
            assert (record.activity, record.activity_event) == ("active", "prompt")  # the hook's again
            assert roster.explain(key)["leases"]["integration"]["expired"] is True  # type: ignore[index]
            [reply] = await asyncio.to_thread(agent.send, agent.report(2, event="ask-again"))
            assert reply["accepted"] is True  # a report after the silence takes the lease back
            assert roster.record(key).activity == "needs_attention"  # type: ignore[union-attr]
        finally:
            server.close()
            live.close()

    try:
        asyncio.run(scenario())
    finally:
        (runtime / "roost" / "reports.sock").unlink(missing_ok=True)
        (runtime / "roost").rmdir()
        runtime.rmdir()
