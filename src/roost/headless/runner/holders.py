"""Starting a holder and reading what one left behind.

A holder runs in a session of its own (``start_new_session``), so neither the daemon's end nor
a signal to the daemon's group reaches it. The daemon is its parent only until the daemon
exits; while it lives it waits for the holder when it ends, so no zombie is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from roost.base import paths
from roost.truth.detect import procs
from roost.truth.roster import ProcessId

READY_TIMEOUT = 10.0
"""Seconds a new holder has to open its socket before the start is given up."""


class HolderError(Exception):
    """A holder would not start; the message says why.

    Not a failure of :mod:`roost.base.errors`: the runner answers it as
    :class:`~roost.base.errors.AdapterFailed` (``holder_failed``), so no caller acts on it."""


def new_key() -> str:
    """A holder's key: its socket's and state file's name, never reused."""
    return f"h{int(time.time())}-{secrets.token_hex(4)}"


def command() -> list[str]:
    """``rosterd-holder`` beside this Python (the same install), else on PATH, else as a module."""
    beside = Path(sys.executable).with_name("rosterd-holder")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("rosterd-holder")
    return [found] if found else [sys.executable, "-m", "roost.headless.holder"]


class Started:
    """A holder this daemon started: its process (to be waited for) and its identity."""

    def __init__(self, key: str, popen: subprocess.Popen[bytes], process: ProcessId) -> None:
        self.key, self.popen, self.process = key, popen, process


def spawn(
    key: str,
    *,
    harness: str,
    cwd: str,
    name: str | None,
    policy: str,
    adapter: list[str],
    env: dict[str, str],
) -> Started:
    """Start a holder over ``adapter``; :func:`ready` waits for its socket. Split in two because
    the holder starts its adapter at once, before its socket answers: the caller names the
    holder's session in between, so that no process scan finds the adapter under a holder that
    belongs to no session yet (an adapter the scan knows by name would start a row of its own)."""
    argv = [*command(), "--key", key, "--harness", harness, "--cwd", cwd, "--policy", policy]
    argv += ["--stderr", str(stderr_file(key))]
    if name:
        argv += ["--name", name]
    argv += ["--", *adapter]
    paths.holders_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(_errors(key), "wb") as err:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    process = procs.identity(popen.pid)
    if process is None:
        popen.wait()
        raise HolderError(_said(key) or "the holder exited as it started")
    return Started(key, popen, process)


async def ready(started: Started) -> None:
    """Wait until the holder's socket answers; a holder that exits or stays silent for
    ``READY_TIMEOUT`` is gone when this raises."""
    popen, socket = started.popen, paths.holder_socket(started.key)
    deadline = time.monotonic() + READY_TIMEOUT
    try:
        while not await _answers(socket):
            if popen.poll() is not None:
                raise HolderError(_said(started.key) or f"the holder exited {popen.returncode}")
            if time.monotonic() > deadline:
                popen.kill()
                popen.wait()
                raise HolderError(f"the holder did not open its socket within {READY_TIMEOUT:.0f} s")
            await asyncio.sleep(0.01)
    finally:
        with contextlib.suppress(FileNotFoundError):
            _errors(started.key).unlink()


def _errors(key: str) -> Path:
    """Where a starting holder's own standard error goes, until its socket answers."""
    return paths.holders_dir() / f"{key}.err"


def _said(key: str) -> str | None:
    """The last line a holder that would not start wrote on standard error."""
    try:
        said = _errors(key).read_text(errors="replace").strip().splitlines()
    except OSError:
        return None
    return said[-1] if said else None


async def _answers(socket: Path) -> bool:
    try:
        _, writer = await asyncio.open_unix_connection(str(socket))
    except OSError:
        return False
    writer.close()
    return True


def state(key: str) -> dict[str, Any] | None:
    """The holder's state file, or None when there is none or it cannot be read."""
    try:
        doc = json.loads(paths.holder_state(key).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def stderr_file(key: str) -> Path:
    """The adapter's standard error: read when it fails, removed with its holder."""
    return paths.holders_dir() / f"{key}.stderr"


def last_words(key: str, limit: int = 600) -> str | None:
    """What the adapter said last on standard error, which usually says why it failed: the
    last error line when there is one (a stack trace ends with the runtime's version), else
    the last line."""
    try:
        lines = [line.strip() for line in stderr_file(key).read_text(errors="replace").splitlines()]
    except OSError:
        return None
    said = [line for line in lines if line]
    errors = [line for line in said if "error" in line.lower()]
    chosen = errors[-1] if errors else said[-1] if said else None
    return chosen[:limit] if chosen else None


def discard(key: str) -> None:
    """Remove what a holder that is gone left behind."""
    for path in (paths.holder_socket(key), paths.holder_state(key), stderr_file(key)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def watch(pid: int, on_exit: Any) -> None:
    """Call ``on_exit()`` on the loop once process ``pid`` has exited (at once if it has)."""
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        loop.call_soon(on_exit)
        return

    def fired() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        on_exit()

    loop.add_reader(fd, fired)
