"""A terminal WebSocket from the test's side: the real ``websockets`` client, frames decoded.

``Term`` connects as a browser would (the session cookie and the daemon's own Origin unless
told otherwise), and keeps what the server sent: the output bytes, the control messages, and
how the socket closed.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.web.conftest import Web


def url(web: Web, pane: str, query: str = "") -> str:
    return f"ws://127.0.0.1:{web.daemon.port}/ws/terminal/{quote(pane, safe='')}{query}"


class Term:
    """One open terminal socket; ``output`` holds every byte written since the last reset."""

    def __init__(
        self, web: Web, pane: str, *, query: str = "", headers: dict[str, str] | None = None
    ) -> None:
        sent = headers if headers is not None else {**web.cookie_header(), "Origin": web.origin}
        self._connection = connect(url(web, pane, query), additional_headers=sent, open_timeout=10)
        self.ws: ClientConnection = self._connection.__enter__()
        self.output = bytearray()
        self.messages: list[dict[str, Any]] = []
        self.close_code: int | None = None
        self.close_reason = ""

    def __enter__(self) -> Term:
        return self

    def __exit__(self, *exc: object) -> None:
        self._connection.__exit__(None, None, None)

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    def pump(self, timeout: float) -> bool:
        """Read one message (False on timeout or once closed)."""
        try:
            data = self.ws.recv(timeout=timeout)
        except TimeoutError:
            return False
        except ConnectionClosed as closed:
            received = closed.rcvd
            self.close_code = received.code if received else None
            self.close_reason = received.reason if received else ""
            return False
        if isinstance(data, bytes):
            self.output += data
        else:
            message = json.loads(data)
            self.messages.append(message)
            if message["type"] == "reset":
                self.output.clear()
        return True

    def until(self, predicate: Any, timeout: float = 10, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0 or (not self.pump(min(left, 0.5)) and self.close_code is not None):
                break
        assert predicate(), f"timed out waiting for {what or predicate}: {bytes(self.output)[-300:]!r}"

    def wait_text(self, text: str, timeout: float = 10) -> None:
        self.until(lambda: text.encode() in self.output, timeout, repr(text))

    def wait_closed(self, timeout: float = 10) -> None:
        self.until(lambda: self.close_code is not None, timeout, "the socket to close")

    def kinds(self) -> list[str]:
        return [message["type"] for message in self.messages]
