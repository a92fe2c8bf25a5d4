"""Reading a server-sent events stream in a background thread, with deadlines.

``Events`` opens a real streaming request to the daemon and parses each frame into an
``Event`` (name, id, JSON data) on a queue, stamped with when it arrived, so a test can
measure how soon a change reached a subscriber.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Event:
    name: str
    id: str
    data: dict[str, Any]
    at: float  # time.monotonic() when the frame was read


class Events:
    """One SSE subscription; use as a context manager."""

    def __init__(self, client: httpx.Client, path: str, headers: dict[str, str] | None = None) -> None:
        self._client = client
        self._path = path
        self._headers = headers or {}
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._ready = threading.Event()
        self.status: int | None = None
        self._socket: socket.socket | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> Events:
        self._thread.start()
        assert self._ready.wait(20), "the stream did not open"
        return self

    def __exit__(self, *_: object) -> None:
        # Closing a response does not wake a thread blocked reading it; shutting the socket does,
        # and the daemon sees the disconnect at once.
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)
        self._thread.join(10)
        self._client.close()

    def _read(self) -> None:
        try:
            with self._client.stream("GET", self._path, headers=self._headers) as response:
                self._socket = response.extensions["network_stream"].get_extra_info("socket")
                self.status = response.status_code
                self._ready.set()
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if line == "":
                        if "event" in fields:
                            data = json.loads(fields.get("data", "null"))
                            self._queue.put(
                                Event(fields["event"], fields.get("id", ""), data, time.monotonic())
                            )
                        fields = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(": ")
                        fields[name] = value
        except (httpx.HTTPError, RuntimeError):
            pass
        finally:
            self._ready.set()
            self._queue.put(None)

    def next(self, timeout: float = 10) -> Event:
        event = self._queue.get(timeout=timeout)
        assert event is not None, "the stream ended"
        return event

    def until(self, name: str, timeout: float = 10, key: str | None = None) -> Event:
        """Skip frames until one named ``name`` (about session ``key``, when given)."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.next(max(0.01, deadline - time.monotonic()))
            if event.name == name and (key is None or event.data.get("session_key") == key):
                return event

    def ended(self, timeout: float = 10) -> bool:
        try:
            while True:
                if self._queue.get(timeout=timeout) is None:
                    return True
        except queue.Empty:
            return False
