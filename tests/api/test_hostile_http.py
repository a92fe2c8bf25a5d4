"""Hostile clients at the HTTP level: a request that is not HTTP gets the JSON error shape, the
login page tells the browser to send no Referer, a stopped tmux server cannot hang
``GET /terminals``, and refused WebSocket upgrades cannot grow the daemon's log without bound."""

from __future__ import annotations

import json
import os
import signal
import socket
import time

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.daemon.fixture import Daemon


def raw_request(daemon: Daemon, request: bytes) -> tuple[bytes, bytes]:
    """The status line and headers, and the body, of the answer to ``request`` over TCP."""
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1, 2", b"99999999999999999999999x"])
def test_a_bad_content_length_gets_the_json_error_shape(running: Daemon, length: bytes) -> None:
    head, body = raw_request(
        running, b"POST /claim HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n{}"
    )
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    assert "not valid HTTP" in json.loads(body)["error"]
    assert running.get("/status")


def test_the_login_page_sends_no_referrer(running: Daemon) -> None:
    with running.unix() as api:
        link = api.post("/login-link").json()["url"]
    with httpx.Client(base_url=f"http://127.0.0.1:{running.port}", timeout=10) as browser:
        for path in (link.split(str(running.port), 1)[1], "/login", "/login?token=used-or-unknown"):
            response = browser.get(path)
            assert response.headers.get("referrer-policy") == "no-referrer", (path, response.status_code)


def test_a_stopped_tmux_server_makes_terminals_a_503_not_a_hang(running: Daemon, api: httpx.Client) -> None:
    roost = running.roost
    roost.start("sh")
    assert api.get("/terminals").status_code == 200
    tmux_pid = int(roost.tmux("display-message", "-p", "#{pid}").strip())
    os.kill(tmux_pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        response = api.get("/terminals", timeout=15)
        waited = time.monotonic() - began
    finally:
        os.kill(tmux_pid, signal.SIGCONT)
    assert response.status_code == 503
    assert "tmux" in response.json()["error"]
    assert waited < 6
    assert api.get("/terminals").status_code == 200


def test_refused_websocket_upgrades_add_at_most_a_line_each_kind(running: Daemon) -> None:
    url = f"ws://127.0.0.1:{running.port}/ws/terminal/%251"
    kinds = [{"Authorization": "Bearer wrong"}, {"Origin": "http://evil.example"}, {}]
    before = running.log.read_text().count("\n")
    for _ in range(40):
        for headers in kinds:
            with pytest.raises(InvalidStatus):
                connect(url, additional_headers=headers, open_timeout=10)
    assert running.get("/status")
    added = running.log.read_text().splitlines()[before:]
    assert len(added) <= 3, added
