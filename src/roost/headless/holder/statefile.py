"""The holder's state file, ``holders/<key>.json``: what it was started with and where it stands.

The file is read by whoever cannot ask the holder: the daemon's runner after the holder ended
(it tells a crash, whose file says how the adapter ended, from a reboot, whose runtime
directory is empty) and ``_roost/state`` asks for the same document live. It is written whole,
atomically (:func:`roost.base.files.replace`), when the holder starts, when it learns the session
id, and when the adapter ends by itself; a holder that was asked to stop removes it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roost.base import files


@dataclass
class Session:
    """What the holder was started with, as its state file says it."""

    key: str
    harness: str
    cwd: str
    argv: list[str]
    name: str | None = None
    policy: str = "attention"
    env: dict[str, str] = field(default_factory=dict)
    stderr: str | None = None
    """Where the adapter's standard error goes (it says why it would not start); else nowhere."""


def document(
    session: Session,
    *,
    session_id: str | None,
    adapter_pid: int | None,
    started_at: float,
    turns: int,
    turn_running: bool,
    socket: Path,
    ended: dict[str, Any] | None,
) -> dict[str, Any]:
    """What the state file holds: enough to reconnect, to resume, or to tell how it ended."""
    return {
        "key": session.key,
        "harness": session.harness,
        "cwd": session.cwd,
        "name": session.name,
        "policy": session.policy,
        "adapter": session.argv,
        "session_id": session_id,
        "holder_pid": os.getpid(),
        "adapter_pid": adapter_pid,
        "started_at": started_at,
        "turns": turns,
        "turn_running": turn_running,
        "socket": str(socket),
        "ended": ended,
    }


def write(path: Path, state: dict[str, Any]) -> None:
    files.replace(path, json.dumps(state, indent=1) + "\n")
