"""Posting a hook's claim to the daemon, after the pane is stamped: ``POST /claim`` on its socket.

The claim (:mod:`roost.truth.detect.hookclaims`) is about the hook's nearest ancestor that is not a
shell: harnesses run hooks either directly (Pi, OpenCode: the parent is the harness) or through
``sh -c`` (Claude Code: the shell's parent is the harness), so skipping shells names the harness
process itself, the same process the scan roots the session at. Hooks running in a harness's
shared background process (``[hook] shared_process``) post nothing: that process is no one
session.

Everything is bounded: no socket file means no daemon and costs one failed ``connect``; a
daemon that accepts and never answers costs :data:`TIMEOUT`. Nothing here raises. Imports stay
minimal and are made only to post (:mod:`roost.base.unixhttp`, which imports nothing but
``_socket``; :mod:`roost.base.cjson` rather than ``json``): this runs on every hook event.
"""

from __future__ import annotations

import os
import time

from roost.base import cjson, paths, procfs
from roost.truth.detect import hookclaims

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.truth.detect.hookevents import Heard

TIMEOUT = 0.25
"""Seconds the whole exchange with the daemon may take; the hook's budget is 800 ms in all."""
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox"})
_ANCESTORS_KEPT = 16


def agent_process() -> tuple[list[int], list[list[int]]] | None:
    """The harness process as ``[pid, start_ticks]`` and its ancestors, nearest first: the
    nearest ancestor of the hook that is no shell, and the ones above it."""
    found: list[int] | None = None
    ancestors: list[list[int]] = []
    for pid, stat in procfs.lineage(os.getppid()):
        if found is not None:
            if len(ancestors) == _ANCESTORS_KEPT:
                break
            ancestors.append([pid, stat.start_ticks])
        elif stat.name.decode(errors="replace") not in _SHELLS:
            found = [pid, stat.start_ticks]
    return None if found is None else (found, ancestors)


def claim(
    heard: Heard, reason: str | None = None, name: str | None = None, seq: int | None = None
) -> dict | None:
    """The claim body for this event about the hook's agent, or None when it should post
    nothing; ``seq`` is the event's place in its agent's order (:mod:`roost.faces.hook.order`)."""
    if not hookclaims.claims(heard):
        return None
    markers = heard.agent.hook.shared_process
    if markers:  # imported only for a manifest that names one, as in the stamp
        from roost.faces.hook import owner

        if owner.runs_in_shared_process(markers):
            return None
    process = agent_process()
    if process is None:
        return None
    return hookclaims.body(heard, process[0], process[1], reason, name, seq)


def send(body: dict, path: str, timeout: float = TIMEOUT) -> int | None:
    """POST the claim; the response's status code, or None when no daemon answered in time."""
    from roost.base.unixhttp import Connection

    data = cjson.dumps(body).encode()
    with Connection(path, deadline=time.monotonic() + timeout) as connection:
        try:
            connection.connect()
            connection.send("POST", "/claim", data, {"Content-Type": "application/json"})
            return connection.response().status
        except OSError:
            return None


def post(heard: Heard, reason: str | None = None, name: str | None = None, seq: int | None = None) -> None:
    """Tell the daemon about this event, if one is listening; never raises, never waits long.

    ``reason`` is the dialog the pane's badge now names, when the hook badged one; ``name``
    the pane's, when it has one; ``seq`` the event's number in its agent's order.
    """
    try:
        path = paths.api_socket_path()
        if not os.path.exists(path):
            return
        body = claim(heard, reason, name, seq)
        if body is not None:
            send(body, path)
    except Exception:
        return
