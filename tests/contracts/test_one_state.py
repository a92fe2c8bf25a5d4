"""One pane walked through every state, each face read at each step: ``roost status``'s table,
``rosterd list``'s, and the notification a subscribed phone gets, all say the same word, the
one docs/contracts.md ("One state, three vocabularies") gives a person, while the machine words
(``roost status --json``'s ``state``, a record's ``activity`` and ``state``) stay each contract's."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from roost.pane.state import words
from tests.cli.rosterd.helpers import ok
from tests.conftest import Roost
from tests.contracts.tables import table
from tests.daemon.fixture import Daemon
from tests.fakes.push_service import PushService

WALK = (
    ("working", ()),
    ("blocked", ("Bash: npm test",)),
    ("working", ()),
    ("done", ()),
    ("idle", ()),
    ("working", ()),
    ("error", ("the API answered 400",)),
)
"""Every state, each from one that a person is told about leaving (working, or needs input)."""
TOLD = {"blocked", "done", "error"}
"""The states a notification is sent for when a session reaches them from working."""
PERSON = {row["internal"]: row["a person reads"] for row in table("One state, three vocabularies")}
ACTIVITY = {row["internal"]: row["rosterd activity"] for row in table("One state, three vocabularies")}


@pytest.fixture
def phone(running: Daemon) -> Iterator[PushService]:
    """A push service stub with one subscription: what a phone with notifications on is told."""
    service = PushService(running.get("/push/vapid-key")["key"])
    with running.unix() as client:
        answer = client.post("/push/subscribe", json={**service.subscription("phone"), "viewing": None})
    assert answer.status_code == 201, answer.text
    yield service
    service.close()


def badge(roost: Roost, pane: str, word: str, *reason: str) -> None:
    """``roost state WORD`` run in the pane, as an agent's hook sets its badge."""
    proc = roost.run("state", word, *reason, env={"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane})
    assert proc.returncode == 0, proc.stderr


def record_in(running: Daemon, pane: str, state: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return running.record_where(
            lambda r: (
                (r.get("tmux") or {}).get("pane") == pane and r["liveness"] != "ended" and r["state"] == state
            )
        )

    record: dict[str, Any] = running.wait_for(found, what=f"{pane} {state}")
    return record


def status_word(roost: Roost, pane: str) -> str:
    """The state ``roost status`` prints on the pane's line, after its badge and command."""
    proc = roost.run("status")
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if f" {pane} " in line)
    found = re.fullmatch(r"  (\S+) +%\d+ .*\(\S+\)  (.+)", line)
    assert found, line
    return found[2]


def list_word(running: Daemon, record: dict[str, Any]) -> str:
    """The state column of the session's row in ``rosterd list``."""
    for line in ok(running, "list").decode().splitlines():
        cells = re.split(r" {2,}", line)
        if cells[-1] == str(record["pid"]):
            return cells[2]
    raise AssertionError(f"no row for pid {record['pid']}")


def test_every_face_says_the_same_word_for_each_state_of_one_pane(
    roost: Roost, running: Daemon, phone: PushService
) -> None:
    pane = roost.start()
    told = 0
    for state, reason in WALK:
        badge(roost, pane, state, *reason)
        record = record_in(running, pane, state)
        assert record["activity"] == ACTIVITY[state]  # the machine words stay
        assert roost.json("status", "--json")["panes"][0]["state"] == state
        said = {"roost status": status_word(roost, pane), "rosterd list": list_word(running, record)}
        if state in TOLD:
            told += 1
            deadline = time.monotonic() + 10
            while len(phone.pushes) < told and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(phone.pushes) == told, phone.pushes
            said["notification"] = phone.pushes[-1]["payload"]["state"]
        assert said == dict.fromkeys(said, PERSON[state]), state
        assert PERSON[state] == words.HUMAN[state]
    assert [push["payload"]["state"] for push in phone.pushes] == ["needs input", "done", "error"]
