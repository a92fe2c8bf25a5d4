"""``POST /sessions/{key}/wait``: one pinned occupant awaited on the change stream."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.api.agentpane import GENEROUS, path, start_agent
from tests.conftest import Roost
from tests.daemon.fixture import Daemon


def ask(row: dict[str, Any], until: list[str], seconds: float = 10, **more: Any) -> dict[str, Any]:
    return {
        "status_epoch": row["status_epoch"],
        "occupant_id": row["occupant_id"],
        "until": until,
        "deadline_ms": round((time.time() + seconds) * 1000),
        **more,
    }


def test_the_outcome_carries_the_row_it_was_decided_on(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    response = agent.post("/wait", ask(row, ["idle"]))
    assert response.status_code == 200, response.text
    assert response.json() == {"session_id": agent.pane, "outcome": "matched", "row": row}


def test_after_revision_waits_for_a_turn_that_ends_later(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    response = agent.post("/wait", ask(row, ["idle"], 1, after_revision=row["revision"]))
    assert response.json()["outcome"] == "timed_out"  # the idle it started from does not count
    agent.state("working")
    agent.wait_row(lambda now: now["state"] == "working", "working")  # the scan samples badges
    agent.state("done")
    response = agent.post("/wait", ask(row, ["idle"], 10, after_revision=row["revision"]))
    doc = response.json()
    assert doc["outcome"] == "matched" and doc["row"]["completed_revision"] > row["revision"]


def test_another_status_epoch_is_an_occupant_change(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    row = agent.row() or {}
    response = agent.post("/wait", ask({**row, "status_epoch": row["status_epoch"] - 1}, ["idle"]))
    assert response.json()["outcome"] == "occupant_changed"


def test_a_deadline_already_past_times_out_at_once(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    response = agent.post("/wait", ask(agent.row() or {}, ["working"], -1))
    assert response.json()["outcome"] == "timed_out"


def test_a_caller_that_hangs_up_frees_its_wait(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    before = running.get("/status")["streams"]
    with pytest.raises(httpx.ReadTimeout), running.unix(timeout=1) as client:
        client.post(f"/sessions/{path(agent.pane)}/wait", json=ask(agent.row() or {}, ["working"], 60))
    roost.wait_for(lambda: running.get("/status")["streams"] == before, GENEROUS, "the wait was let go")


def test_a_daemon_that_stops_ends_the_wait_as_an_occupant_change(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    before = running.get("/status")["streams"]
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(agent.post, "/wait", ask(agent.row() or {}, ["working"], 60))
        roost.wait_for(lambda: running.get("/status")["streams"] > before, GENEROUS, "the wait registered")
        running.stop()
        response = waiting.result(GENEROUS)
    assert response.json()["outcome"] == "occupant_changed"


@pytest.mark.parametrize(
    "change",
    [
        {"until": []},
        {"until": ["idle", "idle"]},
        {"until": ["done"]},
        {"until": "idle"},
        {"occupant_id": 0},
        {"status_epoch": "1"},
        {"deadline_ms": None},
        {"deadline_ms": 2**53},
        {"after_revision": -1},
    ],
)
def test_malformed_waits_are_refused(roost: Roost, running: Daemon, change: dict[str, Any]) -> None:
    agent = start_agent(roost, running)
    response = agent.post("/wait", {**ask(agent.row() or {}, ["idle"]), **change})
    assert response.status_code == 400, response.text


def test_an_unknown_session_is_not_found(running: Daemon) -> None:
    body = {"status_epoch": 1, "occupant_id": 1, "until": ["idle"], "deadline_ms": 0}
    with running.unix() as client:
        assert client.post("/sessions/nobody/wait", json=body).status_code == 404
