"""``POST /sessions/{key}/input``: raw bytes, unfenced, exactly as given, once."""

from __future__ import annotations

import base64

from tests.api.agentpane import AgentPane, path, start_agent
from tests.conftest import Roost
from tests.daemon.fixture import Daemon


def data(raw: bytes) -> dict[str, str]:
    return {"data": base64.b64encode(raw).decode()}


def test_bytes_arrive_exactly_as_given(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    raw = b"line one\nline two\r\x1b[A\x1b[200~not a paste\t\x7f"
    response = agent.post("/input", data(raw))
    assert response.status_code == 200, response.text
    assert response.json() == {"session_id": agent.pane, "written_bytes": len(raw)}
    agent.wait_received(b"\x7f")
    assert agent.received() == raw  # no markers, no Enter, line feeds kept
    agent.nothing_arrives(raw)


def test_input_is_unfenced_a_blocked_agent_takes_it(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    agent.state("blocked")
    agent.wait_row(lambda row: row["state"] == "blocked", "blocked")
    assert agent.post("/input", data(b"1")).status_code == 200
    agent.wait_received(b"1")


def test_any_pane_takes_input_with_or_without_a_row(roost: Roost, running: Daemon) -> None:
    log = roost.root / "plain.log"
    pane = roost.start(roost.fake_agent("--log", str(log), "--no-hooks"), session="plain")
    roost.wait_screen(pane, "fake agent ready")
    plain = AgentPane(roost, running, pane, log)
    assert plain.row() is None
    response = plain.post("/input", data(b"hi\r"))
    assert response.status_code == 200, response.text
    plain.wait_received(b"hi\r")


def test_a_session_key_names_its_pane(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    key = agent.record()["session_key"]
    with running.unix() as client:
        response = client.post(f"/sessions/{key}/input", json=data(b"by key"))
    assert response.json() == {"session_id": agent.pane, "written_bytes": 6}
    agent.wait_received(b"by key")


def test_a_missing_pane_is_not_found(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")
    with running.unix() as client:
        for key in (path("%999"), "no-such-session"):
            response = client.post(f"/sessions/{key}/input", json=data(b"x"))
            assert response.status_code == 404, response.text


def test_malformed_input_is_refused_and_nothing_written(roost: Roost, running: Daemon) -> None:
    agent = start_agent(roost, running)
    for body, status in (
        ({"data": "not base64!"}, 400),
        ({"data": ""}, 400),
        ({"text": "x"}, 400),
        (data(b"x" * 65_537), 413),
    ):
        response = agent.post("/input", body)
        assert response.status_code == status, (body, response.text)
    agent.nothing_arrives(b"")
