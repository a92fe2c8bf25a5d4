"""Each verb's exit codes and ``--json`` fields, as docs/contracts.md tables them, checked
against the failure table and against the real verbs on a throwaway tmux server."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess

import pytest

from roost.base import errors, statusrow
from roost.faces.cli.daemonclient import Refused
from roost.faces.cli.rosterd import exit_code as rosterd_exit
from roost.truth.roster import records
from tests.cli.roost.inpane import Shell
from tests.cli.rosterd.helpers import badged, ok, session_of
from tests.conftest import BIN, Roost
from tests.contracts.tables import names, table
from tests.daemon.fixture import Daemon

ROOST_EXITS = table("`roost` exit codes")
ROSTERD_EXITS = table("`rosterd` exit codes")
ROOST_JSON = {row["command"]: names(row["fields"]) for row in table("`roost --json` documents")}
ROSTERD_JSON = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}


@pytest.mark.parametrize("row", ROOST_EXITS, ids=lambda row: f"{row['verb']}={row['exit']}")
def test_a_roost_verbs_failures_exit_with_its_documented_code(row: dict[str, str]) -> None:
    for name in names(row["failures"]):
        assert getattr(errors, name).exit_code == int(row["exit"]), name


@pytest.mark.parametrize("row", ROSTERD_EXITS, ids=lambda row: f"{row['verb']}={row['exit']}")
def test_a_rosterd_verbs_failures_exit_with_its_documented_code(row: dict[str, str]) -> None:
    for name in names(row["failures"]):
        assert rosterd_exit(getattr(errors, name)("x")) == int(row["exit"]), name


def test_rosterd_exits_only_with_the_specifications_four_codes() -> None:
    """0 ok, 1 a user error, 2 the daemon unreachable, 3 a peer unreachable: whatever code
    ``roost`` gives a failure, ``rosterd`` says 2 only of the daemon and 3 only of a peer."""
    said = {name.__name__: rosterd_exit(name("x")) for name in errors.FAILURES}
    assert {name for name, code in said.items() if code == 2} == {"Unavailable", "NoServer"}
    assert {name for name, code in said.items() if code == 3} == {"PeerUnreachable"}
    assert set(said.values()) == {1, 2, 3}
    refusal = Refused(502, b'{"error": "n1 did not answer", "code": "peer_unreachable"}')
    assert rosterd_exit(refusal) == 3
    assert rosterd_exit(Refused(404, b'{"error": "no such node"}')) == 1


def _examples(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if row["e.g."]]


@pytest.mark.parametrize("row", _examples(ROOST_EXITS), ids=lambda row: row["e.g."])
def test_each_roost_example_exits_with_its_code(roost: Roost, row: dict[str, str]) -> None:
    """Stdin is a pipe, never the terminal pytest may run in: ``attach`` must not take it."""
    places = {"$PANE": roost.start("sh", session="main"), "$SESSION": "main"}
    args = [places.get(word, word) for word in shlex.split(row["e.g."])]
    proc = roost.run(*args, input="", timeout=30)
    assert proc.returncode == int(row["exit"]), proc.stderr


@pytest.mark.parametrize("row", _examples(ROSTERD_EXITS), ids=lambda row: row["e.g."])
def test_each_rosterd_example_exits_with_its_code(roost: Roost, row: dict[str, str]) -> None:
    """No daemon runs in the sandbox: the examples are those that need none."""
    proc = subprocess.run(
        [str(BIN / "rosterd"), *shlex.split(row["e.g."])],
        capture_output=True,
        text=True,
        env=roost.env,
        timeout=30,
    )
    assert proc.returncode == int(row["exit"]), proc.stderr


def _fields(doc: dict, command: str) -> list[str]:
    assert list(doc)[:2] == ["schema", "command"] and doc["schema"] == 1 and doc["command"] == command
    return list(doc)[2:]


def test_roost_json_documents_carry_the_documented_fields(roost: Roost) -> None:
    pane = roost.start("sh")
    shell = Shell.open(roost, "agent")
    closing = roost.window("closing", "sh")
    docs = {
        "send": roost.json("send", "--json", pane, "true"),
        "read": roost.json("read", "--json", pane),
        "screen": roost.json("screen", "--json", pane),
        "state": roost.json("state", "done", "--json"),
        "status": roost.json("status", "--json"),
        "close": roost.json("close", "--force", "--json", closing),
    }
    whoami = shell.run("whoami", "--json")
    assert whoami.returncode == 0, whoami.stderr
    docs["whoami"] = json.loads(whoami.stdout)
    for command, doc in docs.items():
        assert _fields(doc, command) == ROOST_JSON[command], command
    status = docs["status"]
    assert all(list(s) == ROOST_JSON["status sessions[]"] for s in status["sessions"]) and status["sessions"]
    assert all(list(p) == ROOST_JSON["status panes[]"] for p in status["panes"]) and status["panes"]


def test_rosterd_json_documents_carry_the_documented_fields(roost: Roost) -> None:
    def rosterd(*args: str) -> dict:
        proc = subprocess.run([str(BIN / "rosterd"), *args], capture_output=True, text=True, env=roost.env)
        return json.loads(proc.stdout)

    for document, args in {
        "version": ("version", "--json"),
        "integrate status": ("integrate", "status", "--json"),
        "detect check": ("detect", "check", "--json"),
    }.items():
        assert _fields(rosterd(*args), document) == ROSTERD_JSON[document], document


def test_the_daemons_route_bodies_carry_the_documented_fields(roost: Roost, running: Daemon) -> None:
    """``status``, ``explain`` and ``name`` print their routes' bodies: no schema, these fields."""
    key = session_of(running, badged(roost, "idle", session="contracts"))["session_key"]
    status = json.loads(ok(running, "status", "--json"))
    explain = json.loads(ok(running, "explain", key, "--json"))
    named = json.loads(ok(running, "name", key, "label", "--json"))
    assert list(status) == ROSTERD_JSON["status (status --json, GET /status)"]
    for part in ("counts", "listen", "rebuild", "reports"):
        assert list(status[part]) == ROSTERD_JSON[f"status {part}"], part
    assert list(status["counts"]) == ["sessions", *records.ACTIVITIES, "ended"]
    assert list(explain) == ROSTERD_JSON["explain (explain --json, GET /sessions/KEY/explain)"]
    assert list(named) == ROSTERD_JSON["name (name --json, POST /sessions/KEY/name)"]
    assert list(named["record"]) == ROSTERD_JSON["record (read --json, each of records)"]


def test_the_roster_documents_are_the_records_fields() -> None:
    snapshot = records.snapshot_document("n", "id", 1, 0, 0.0, [])
    assert list(snapshot) == ROSTERD_JSON["snapshot (list --json, GET /snapshot)"]
    assert [f.name for f in dataclasses.fields(records.Record)] == ROSTERD_JSON[
        "record (read --json, each of records)"
    ]


def test_the_status_row_is_its_eleven_fields_with_no_schema() -> None:
    """Differs on purpose (docs/contracts.md): the row is the web app's, with no schema."""
    row = ROSTERD_JSON["roost api agent-status --json (a status row)"]
    assert row == list(statusrow.FIELDS) and len(row) == 11 and "schema" not in row


def test_without_a_terminal_attach_refuses_and_view_opens_a_window_of_main(roost: Roost) -> None:
    """As docs/contracts.md says under the roost exit codes: attach exits 1 and starts nothing;
    new does not attach; view, outside a roost pane, opens a window of main."""
    attach = roost.run("attach", input="")
    assert attach.returncode == 1
    assert attach.stderr == "usage: roost attaches a terminal; run it from one\n"
    assert roost.tmux("list-sessions", "-F", "#{session_name}", check=False) == ""
    roost.start("sleep 600")  # session main, for view to open a window of
    new = roost.run("new", "-s", "other", input="", timeout=30)
    assert new.returncode == 0 and new.stdout.strip().startswith("%"), new.stderr
    view = roost.run("view", "cat", input="")
    assert view.returncode == 0, view.stderr
    pane = view.stdout.strip()
    where = roost.tmux("display-message", "-p", "-t", pane, "#{session_name} #{window_index}").split()
    assert where[0] == "main" and where[1] != "0"
    assert f"open in window {where[1]} of session main ({pane})" in view.stderr
    assert "run roost to attach" in view.stderr
    again = roost.run("view", "cat", input="")
    assert again.returncode == 0, again.stderr
    assert pane not in roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split()
