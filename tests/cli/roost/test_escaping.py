"""Nothing from outside reaches a person's terminal raw: every printer for people shows a
control character as an escape (ESC as ``\\x1b``), and ``--json`` stays the daemon's own JSON.

Before, a claim whose ``cwd`` held ``ESC ] 0 ; pwned BEL ESC [ 2 J`` retitled and cleared the
terminal of whoever ran ``rosterd list``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from tests.api.agentpane import start_agent
from tests.api.helpers import about, sleeper
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon, pid_start_ticks, running

__all__ = ["daemon", "running"]

HOSTILE = "x\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"
SHOWN = "x\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.fixture
def hostile(running: Daemon) -> Iterator[str]:
    """A session whose folder and recap hold escapes; its key."""
    with sleeper() as proc, running.unix() as client:
        body = about(proc, activity="working", event="prompt")
        body["fields"] = {"cwd": f"/tmp/{HOSTILE}\nfake row", "recap": f"first line\n{HOSTILE}"}
        response = client.post("/claim", json=body)
        assert response.status_code in (200, 201), response.text
        yield response.json()["session_key"]


def rosterd(running: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "rosterd"), *args], capture_output=True, text=True, env=running.env, timeout=30
    )


def assert_escaped(text: str) -> None:
    assert SHOWN in text, text
    assert not any(char in text for char in RAW), repr(text)


@pytest.mark.parametrize("verb", [["list"], ["read", "KEY"]])
def test_rosterd_shows_escapes_instead_of_sending_them(
    running: Daemon, hostile: str, verb: list[str]
) -> None:
    shown = rosterd(running, *[hostile if arg == "KEY" else arg for arg in verb])
    assert shown.returncode == 0, shown.stderr
    assert_escaped(shown.stdout)


def test_a_list_row_stays_one_line(running: Daemon, hostile: str) -> None:
    shown = rosterd(running, "list")
    rows = shown.stdout.splitlines()
    assert len(rows) == 1, rows
    assert rows[0].startswith(f"[{SHOWN}\\x0afake row]")


def test_rosterd_changes_shows_escapes(running: Daemon, hostile: str) -> None:
    with subprocess.Popen(
        [str(BIN / "rosterd"), "changes", "--since", "0"], stdout=subprocess.PIPE, text=True, env=running.env
    ) as changes:
        try:
            assert changes.stdout is not None
            for text in changes.stdout:
                if hostile in text:
                    break
            assert_escaped(text)
        finally:
            changes.kill()


def test_json_is_the_daemon_s_own(running: Daemon, hostile: str) -> None:
    listed = rosterd(running, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "\\u001b" in listed.stdout and "\x1b" not in listed.stdout
    (record,) = json.loads(listed.stdout)["records"]
    assert record["cwd"] == f"/tmp/{HOSTILE}\nfake row"


def test_a_failure_quoting_what_was_typed_is_escaped(roost: Roost) -> None:
    roost.start("sleep 600")
    failed = roost.run("send", HOSTILE, "hello")
    assert failed.returncode == 2, failed.stderr
    assert_escaped(failed.stderr)


def test_roost_status_escapes_a_pane_s_label(roost: Roost) -> None:
    pane = roost.start("sleep 600")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-name", HOSTILE)
    shown = roost.run("status")
    assert shown.returncode == 0, shown.stderr
    assert_escaped(shown.stdout)
    assert json.loads(roost.run("status", "--json").stdout)["panes"][0]["name"] == HOSTILE


@pytest.mark.parametrize("name", ["\x85nel", "\u202eevil", "line\u2028sep"])
def test_roost_spawn_refuses_a_name_that_is_not_one_line(roost: Roost, name: str) -> None:
    roost.start("sleep 600")
    refused = roost.run("spawn", name, "sleep", "600")
    assert refused.returncode == 1
    assert "one line" in refused.stderr


def test_rosterd_error_messages_are_escaped(running: Daemon) -> None:
    failed = rosterd(running, "read", HOSTILE)
    assert failed.returncode == 1
    assert not any(char in failed.stderr for char in RAW), repr(failed.stderr)


def test_roost_api_escapes_a_row_s_message(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running, state=None)
    pid = agent.record()["pid"]
    with running.unix() as client:
        body = {"pid": pid, "start_ticks": pid_start_ticks(pid), "source": "screen", "activity": "blocked"}
        response = client.post("/claim", json={**body, "fields": {"pending": {"summary": HOSTILE}}})
        assert response.status_code == 200, response.text
    agent.wait_row(lambda row: row["state"] == "blocked", "blocked")
    shown = roost.run("api", "agent-status", agent.pane, env={"XDG_RUNTIME_DIR": str(running.runtime)})
    assert shown.returncode == 0, shown.stderr
    assert_escaped(shown.stdout)
