"""The terminal WebSocket against hostile clients: a wrong bearer is refused with 401, as the
docs say (it was 403), and a message nested thousands deep closes the socket with 1008 and a
reason (it used to fail inside the JSON parser and drop the socket without a close frame)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.daemon.fixture import Daemon


def url(daemon: Daemon, pane: str) -> str:
    return f"ws://127.0.0.1:{daemon.port}/ws/terminal/{quote(pane, safe='')}"


@pytest.mark.parametrize("header", ["Bearer wrong", "Basic abc", "Bearer"])
def test_a_wrong_bearer_is_a_401_with_the_json_error(running: Daemon, header: str) -> None:
    pane = running.roost.start("sh")
    with pytest.raises(InvalidStatus) as caught:
        connect(url(running, pane), additional_headers={"Authorization": header}, open_timeout=10)
    response = caught.value.response
    assert response.status_code == 401
    assert b"bearer token" in response.body
    assert response.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "message", ["[" * 2000 + "]" * 2000, '{"type":"input","data":' + "[" * 5000 + "]" * 5000 + "}"]
)
def test_a_message_nested_thousands_deep_closes_with_1008(running: Daemon, message: str) -> None:
    pane = running.roost.start("sh")
    headers = {"Authorization": f"Bearer {running.token}"}
    with connect(url(running, pane), additional_headers=headers, open_timeout=10) as ws:
        ws.send(message)
        with pytest.raises(ConnectionClosed) as caught:
            while True:
                ws.recv(timeout=10)
    received = caught.value.rcvd
    assert received is not None, "the socket was dropped without a close frame"
    assert received.code == 1008
    assert "deep" in received.reason
