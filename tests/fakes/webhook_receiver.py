"""A webhook receiver on 127.0.0.1: keeps every POST it gets (headers, JSON body, when).

It answers each with ``status`` (200 unless a test says otherwise; a 3xx names ``location``),
or, with ``hang`` set, reads the request and never answers until it is closed: a receiver that
is up but stuck. HTTP/1.1, so the daemon may keep its connection for the next delivery.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: Any
    at: float
    """time.monotonic() when it arrived."""


class Receiver:
    def __init__(self, status: int = 200, hang: bool = False, location: str | None = None) -> None:
        self.status = status
        self.hang = hang
        self.location = location
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                got = Received(
                    self.path,
                    {name.lower(): value for name, value in self.headers.items()},
                    json.loads(raw),
                    time.monotonic(),
                )
                with receiver._lock:
                    receiver.received.append(got)
                if receiver.hang:
                    receiver._released.wait(30)
                    self.close_connection = True
                    return
                self.send_response(receiver.status)
                if receiver.location is not None:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def bodies(self) -> list[Any]:
        with self._lock:
            return [got.body for got in self.received]

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        """The first ``count`` deliveries, once that many have arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return self.received[:count]
            time.sleep(0.01)
        raise AssertionError(f"{len(self.received)} of {count} deliveries arrived in {timeout} s")

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
