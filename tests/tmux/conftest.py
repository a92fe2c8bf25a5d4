"""Helpers for the control-mode tests: sessions on the ``roost`` fixture's server, asyncio glue.

Sessions start with roost's packaged config, so its hooks run (and send the control clients
reply blocks that are not theirs) exactly as on a real server. ``@roost-bin`` is ``true``
here: the hooks must not depend on other verbs, and a hook that prints would put a pane in
view mode.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from roost.pane.tmux.server import CONFIG, Server
from tests.conftest import Roost

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
    """Run one test's async body with a deadline, so a hang fails instead of blocking the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def server(roost: Roost) -> Server:
    return Server(roost.socket)


def new_session(roost: Roost, name: str, command: str = "/bin/sh") -> str:
    """A detached 120x30 session running ``command``; returns its first pane's ``%N``."""
    out = roost.tmux(
        "-f", str(CONFIG),
        "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, "-x", "120", "-y", "30", command,
        ";", "set-option", "-g", "@roost-bin", "true",
    )  # fmt: skip
    return out.strip().splitlines()[0]


def client_sessions(roost: Roost) -> list[str]:
    """The session of every control client attached to the server, sorted."""
    out = roost.tmux("list-clients", "-F", "#{client_control_mode} #{session_id}")
    return sorted(line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("1 "))


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Recorder:
    """A callback that keeps what it is given, and lets a test wait for something in it."""

    items: list[Any] = field(default_factory=list)

    def __call__(self, item: Any) -> None:
        self.items.append(item)

    def of(self, kind: type[T]) -> list[T]:
        return [item for item in self.items if isinstance(item, kind)]

    async def wait(self, predicate: Callable[[], object], timeout: float = 15, what: str = "") -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            value = predicate()
            if value:
                return value
            await asyncio.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what or predicate}")
