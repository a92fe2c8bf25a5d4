"""The hook port: agents' hook events POSTed to the daemon (``POST /hooks/{harness}``).

A fake agent posts its events from its own process with ``$TMUX_PANE`` in ``X-Pane``, as
Claude Code's HTTP hooks do (SessionStart stays a command hook, as Claude runs it); a twin runs
``rosterd-hook`` for every event. The same turns must leave the same badges, turns, replies,
events-log lines and roster activity both ways. Whoever is not the agent of the pane it names
is refused, and nothing changes.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.agentpane import GENEROUS, AgentPane, start_agent
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, free_port

DIFFER = ("pane", "window", "cursor", "ts", "time", "at", "session", "name")
"""Events-log fields that differ between two panes whatever happened in them."""
POSTER = Path(__file__).resolve().parents[1] / "fakes" / "hook_poster.py"
CLAUDE_EVENT = {"session_id": "s-1", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}


def url(daemon: Daemon, harness: str = "claude") -> str:
    return f"http://127.0.0.1:{daemon.hook_port}/hooks/{harness}"


def twins(roost: Roost, daemon: Daemon, *flags: str) -> tuple[AgentPane, AgentPane, Path]:
    """The same fake agent twice: one runs the command hook, the other posts to the hook port."""
    log = roost.root / "posts.log"
    # The command hook finds the daemon by its socket under XDG_RUNTIME_DIR, as in a real session:
    # the shell that starts the agents has the daemon's, and a pane gets its starter's environment.
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    roost.start("sleep 600", session="first")
    by_command = start_agent(roost, daemon, *flags, name="command")
    by_http = start_agent(
        roost, daemon, *flags, "--hook-url", url(daemon), "--hook-log", str(log), name="http"
    )
    return by_command, by_http, log


def events(roost: Roost, pane: str) -> list[dict[str, Any]]:
    """The pane's events-log lines without what differs between two panes (ids, times)."""
    proc = roost.run("events", "--pane", pane)
    assert proc.returncode == 0, proc.stderr
    kept = []
    for line in proc.stdout.splitlines():
        event = json.loads(line)
        kept.append({k: v for k, v in event.items() if k not in DIFFER})
    return kept


def turn(roost: Roost, agent: AgentPane, prompt: str) -> tuple[str, str, str]:
    sent = roost.run("send", agent.pane, prompt)
    assert sent.returncode == 0, sent.stderr
    done = roost.run("wait-done", agent.pane, str(int(GENEROUS)))
    assert done.returncode == 0, done.stderr
    reply = roost.run("read", agent.pane)
    assert reply.returncode == 0, reply.stderr
    return roost.option(agent.pane, "@roost-state"), roost.option(agent.pane, "@roost-turn"), reply.stdout


def test_http_hooks_stamp_the_same_turns_as_command_hooks(roost: Roost, running: Daemon) -> None:
    daemon = running
    by_command, by_http, log = twins(roost, daemon, "--echo-reply", "--dialog-on", "DIALOG")
    for prompt in ("first", "second"):
        assert turn(roost, by_http, prompt) == turn(roost, by_command, prompt)
    for agent in (by_command, by_http):
        assert roost.run("send", agent.pane, "please DIALOG").returncode == 0
        roost.wait_for(lambda a=agent: roost.option(a.pane, "@roost-state") == "blocked", GENEROUS, "blocked")
        assert roost.option(agent.pane, "@roost-reason") == "Bash: npm test"
        agent.wait_row(lambda row: row["state"] == "blocked", "the roster's blocked row")
        roost.tmux("send-keys", "-t", agent.pane, "1")
        roost.wait_for(lambda a=agent: roost.option(a.pane, "@roost-state") == "done", GENEROUS, "done")
    assert events(roost, by_http.pane) == events(roost, by_command.pane)
    rows = [by_command.row(), by_http.row()]
    keys = ("agent_id", "state", "source", "promptable")
    assert rows[0] is not None and rows[1] is not None
    assert {k: rows[0][k] for k in keys} == {k: rows[1][k] for k in keys}
    same = (
        "harness",
        "session_id",
        "activity",
        "activity_event",
        "recap",
        "sources",
        "error_reason",
        "pending",
    )
    records = [by_command.record(), by_http.record()]
    assert {k: records[0][k] for k in same} == {k: records[1][k] for k in same}
    assert records[1]["recap"] == "reply to: please DIALOG"
    said = log.read_text().splitlines()
    assert said and all(line.split(" ", 2)[1] == "200" for line in said), said
    assert {line.split()[0] for line in said} >= {
        "UserPromptSubmit",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    }


def post(daemon: Daemon, pane: str, body: object = CLAUDE_EVENT, **headers: str) -> httpx.Response:
    with httpx.Client(timeout=GENEROUS) as client:
        return client.post(url(daemon), json=body, headers={"X-Pane": pane, **headers})


def unchanged(roost: Roost, agent: AgentPane) -> dict[str, str]:
    return {name: roost.option(agent.pane, name) for name in ("@roost-state", "@roost-turn", "@roost-reason")}


def from_pane(
    roost: Roost, daemon: Daemon, name: str, pane: str = "", agent: str | None = None, **how: Any
) -> tuple[str, Path]:
    """A pane whose program (declared ``agent`` when given) posts one event (``event``,
    default :data:`CLAUDE_EVENT`) to ``path`` naming ``pane`` (its own when ""); the pane,
    and the file its answer will be in."""
    out = roost.root / f"{name}.answer"
    event = json.dumps(how.get("event", CLAUDE_EVENT))
    argv = [sys.executable, str(POSTER), url(daemon) + how.get("path", ""), str(out), event]
    prefix = f"env ROOST_AGENT={agent} " if agent else ""
    started = roost.start(prefix + shlex.join(argv + ([pane] if pane else [])), session=name)
    return started, out


def answer(roost: Roost, out: Path) -> str:
    roost.wait_for(out.exists, GENEROUS, f"{out.name}")
    return out.read_text()


def test_posts_from_anyone_but_the_panes_agent_change_nothing(roost: Roost, running: Daemon) -> None:
    daemon = running
    agent = start_agent(roost, daemon, name="victim")
    before = unchanged(roost, agent)
    refused = post(daemon, agent.pane)  # this test's process: no agent, no pane
    assert refused.status_code == 403, refused.text
    assert "refused" in refused.json()["error"]
    browser = post(daemon, agent.pane, Origin="http://127.0.0.1:8790")
    assert (browser.status_code, browser.json()["error"]) == (
        403,
        "refused: a browser's request; only an agent's hook may post here",
    )
    for bad in ("%999999", "%1;kill-server", "1", "%1 2"):
        assert post(daemon, bad).status_code == 403
    _, shell = from_pane(roost, daemon, "shell")  # a pane with no agent in it
    assert answer(roost, shell).startswith("403 ")
    _, other = from_pane(roost, daemon, "other", agent.pane, "claude")  # an agent naming a pane not its own
    assert answer(roost, other).startswith("403 ")
    assert unchanged(roost, agent) == before
    assert agent.row()["state"] == "idle"  # type: ignore[index]
    # Seven reached the proof and failed it; the browser's was turned away at the door.
    assert daemon.get("/status")["hooks"]["counts"] == {"applied": 0, "refused": 7}


def test_the_agent_waits_only_for_the_proof_and_its_events_apply_after_in_order(
    roost: Roost, running: Daemon
) -> None:
    """An event whose answer carries nothing is answered once its poster is proven: with the
    tmux server stopped (SIGSTOP), an agent proven before is still answered at once, event
    after event; the stamps land once tmux runs again, in the order the events were sent."""
    daemon = running
    fifo = roost.root / "events"
    os.mkfifo(fifo)
    out = roost.root / "agent.answer"
    argv = [sys.executable, str(POSTER), url(daemon), str(out), json.dumps(CLAUDE_EVENT)]
    command = f"env ROOST_AGENT=claude {shlex.join(argv)} < {shlex.quote(str(fifo))}"
    pane = roost.start(command, session="agent")
    with open(fifo, "w") as sent:  # the pane's shell opens it to read: the poster starts
        assert answer(roost, out) == "200 "
        roost.wait_for(lambda: roost.option(pane, "@roost-state") == "working", GENEROUS, "the first stamp")
        assert roost.option(pane, "@roost-turn") == "1"
        tmux = int(roost.tmux("display-message", "-p", "#{pid}"))
        os.kill(tmux, signal.SIGSTOP)
        try:
            for name in ("Stop", "UserPromptSubmit"):
                out.unlink()
                sent.write(json.dumps({**CLAUDE_EVENT, "hook_event_name": name}) + "\n")
                sent.flush()
                assert answer(roost, out) == "200 ", name  # answered while no stamp could be made
        finally:
            os.kill(tmux, signal.SIGCONT)
        roost.wait_for(lambda: roost.option(pane, "@roost-turn") == "2", GENEROUS, "the second turn")
        assert roost.option(pane, "@roost-state") == "working"  # done, then working: in order
        moves = [(event["from"], event["to"], event["turn"]) for event in events(roost, pane)]
        assert moves == [(None, "working", 1), ("working", "done", 1), ("done", "working", 2)], moves
    assert daemon.get("/status")["hooks"]["counts"] == {"applied": 3, "refused": 0}


@pytest.mark.skipif(os.getuid() != 0, reason="posting as another user needs root")
def test_another_users_post_is_refused(roost: Roost, running: Daemon) -> None:
    daemon = running
    agent = start_agent(roost, daemon, name="victim")
    before = unchanged(roost, agent)
    curl = [
        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
        "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", f"X-Pane: {agent.pane}",
        "-H", "Content-Type: application/json", "--data", json.dumps(CLAUDE_EVENT), url(daemon),
    ]  # fmt: skip
    answered = subprocess.run(curl, capture_output=True, text=True, timeout=GENEROUS, check=False)
    assert answered.stdout == "403", answered
    assert unchanged(roost, agent) == before


def test_bodies_and_names_the_port_cannot_read_are_refused(running: Daemon) -> None:
    daemon = running
    with httpx.Client(timeout=GENEROUS) as client:
        unknown = client.post(url(daemon, "no-such-agent"), json=CLAUDE_EVENT, headers={"X-Pane": "%1"})
        assert (unknown.status_code, unknown.json()) == (404, {"error": "no harness 'no-such-agent'"})
        path = client.post(url(daemon, "Bad..Name"), json=CLAUDE_EVENT, headers={"X-Pane": "%1"})
        assert path.status_code == 404
        garbage = client.post(url(daemon), content=b"{nope", headers={"X-Pane": "%1"})
        assert garbage.status_code == 400 and garbage.json()["error"].startswith("the event is not JSON")
        deep = client.post(url(daemon), content=b"[" * 300 + b"]" * 300, headers={"X-Pane": "%1"})
        assert deep.status_code == 400
        huge = client.post(url(daemon), content=b" " * (4 * 1024 * 1024 + 1), headers={"X-Pane": "%1"})
        assert huge.status_code == 413
        wrong = client.get(url(daemon))
        assert wrong.status_code == 405
        outside = client.post(url(daemon), json=CLAUDE_EVENT)  # no pane: an agent outside tmux
        assert (outside.status_code, outside.content) == (200, b"")


SUGGESTION = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
    "behavior": "allow",
}
PERMISSION = {
    "session_id": "s-gate",
    "cwd": "/tmp",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch x"},
    "permission_suggestions": [SUGGESTION, {"type": "setMode", "mode": "acceptEdits"}],
}


def test_the_gates_url_holds_the_request_until_an_answer_comes_from_anywhere(
    roost: Roost, running: Daemon
) -> None:
    daemon = running
    pane, out = from_pane(roost, daemon, "gated", agent="claude", event=PERMISSION, path="/gate")

    def held() -> dict[str, Any] | None:
        found = daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane)
        return found if found and (found.get("pending") or {}).get("answerable") else None

    record = roost.wait_for(held, GENEROUS, "the request held open")
    assert isinstance(record, dict)
    assert (record["pending"]["summary"], record["activity"]) == ("Bash: touch x", "needs_attention")
    assert roost.option(pane, "@roost-state") == "blocked"
    assert not out.exists()  # the agent still waits for its answer
    with daemon.unix() as client:
        answered = client.post(
            f"/sessions/{record['session_key']}/permission", json={"option": "allow_always"}
        )
    assert answered.status_code == 200, answered.text
    status, body = answer(roost, out).split(" ", 1)
    decision = {"behavior": "allow", "updatedPermissions": [SUGGESTION]}
    assert (status, json.loads(body)) == (
        "200",
        {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}},
    )
    roost.wait_for(
        lambda: roost.option(pane, "@roost-state") == "working", GENEROUS, "the badge back to working"
    )


def activated(roost: Roost, daemon: Daemon, address: str) -> None:
    """``systemd-socket-activate`` holding ``address`` for the daemon, which it starts at the
    first connection. It passes the program no environment but what ``--setenv`` names, as a
    unit's ``Environment=``."""
    carried = [f"--setenv={name}={value}" for name, value in daemon.env.items()]
    command = ["systemd-socket-activate", "-l", address, "--fdname=hooks", *carried, *daemon.command()]
    with open(daemon.log, "wb") as log:
        daemon.proc = subprocess.Popen(command, env=daemon.env, stdout=log, stderr=log)
    roost.wait_for(lambda: b"Listening on" in daemon.log.read_bytes(), GENEROUS, "the socket held")


def test_a_hook_that_arrives_while_the_daemon_is_down_starts_it_and_is_answered(
    roost: Roost, daemon: Daemon
) -> None:
    """Socket activation as a systemd socket unit does it (``systemd-socket-activate``): the
    port listens with no daemon behind it; the first hook starts the daemon, which takes the
    socket from LISTEN_FDS, and the hook waits for it and is answered, never refused."""
    daemon.write_config()
    held = free_port()
    pane = roost.start("sleep 600", session="agent")  # the pane exists before anyone posts
    activated(roost, daemon, f"127.0.0.1:{held}")
    assert not daemon.socket.exists()  # no daemon yet
    roost.tmux("respawn-pane", "-k", "-t", pane, f"env ROOST_AGENT=claude {shlex.join(poster(held, roost))}")
    said = answer(roost, roost.root / "woke.answer")
    assert said == "200 ", said
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "working", GENEROUS, "the stamp")
    daemon.wait_ready()
    facts = daemon.get("/status")
    assert facts["listen"]["hooks"] == f"127.0.0.1:{held}"
    with socket.socket() as probe:  # the configured port stays free: the passed socket is the port
        probe.bind(("127.0.0.1", daemon.hook_port))


def poster(port: int, roost: Roost) -> list[str]:
    out = str(roost.root / "woke.answer")
    return [
        sys.executable,
        str(POSTER),
        f"http://127.0.0.1:{port}/hooks/claude",
        out,
        json.dumps(CLAUDE_EVENT),
    ]


def test_a_passed_socket_that_is_not_on_loopback_is_refused(roost: Roost, daemon: Daemon) -> None:
    daemon.write_config()
    held = free_port()
    activated(roost, daemon, f"0.0.0.0:{held}")
    with socket.create_connection(("127.0.0.1", held), timeout=GENEROUS):
        assert daemon.proc.wait(GENEROUS) == 1
    said = daemon.log.read_text()
    assert f"the socket passed for the hook port listens on ('0.0.0.0', {held}), not on 127.0.0.1" in said
    assert not daemon.socket.exists()
