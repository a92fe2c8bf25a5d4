"""``rosterd-hook --gate [HARNESS]``: hold a permission request open for an answer from anywhere.

Installed for one event (``rosterd integrate install claude --gate``: Claude Code's
``PermissionRequest``, per the manifest's ``[hook.gate]``), it does what the plain hook does
with that event — badge the pane, tell the daemon — and then waits: it posts the request to
the daemon's ``POST /gate`` and the daemon holds it open until someone answers (the web app,
``rosterd allow``, MCP, the API), the session moves on, or ``gate_timeout_s`` passes. An
answer is printed as the manifest's ``allow`` or ``deny`` JSON, which the host applies.

It fails open, always: no daemon, a daemon that goes away, a timeout, a request it cannot
read, or anything unexpected, and it prints nothing and exits 0, so the host's own dialog
(drawn while the hook runs) decides. It never decides anything itself. When the person answers
the dialog first, the host ends this process, and the daemon sees the request hang up.

Unlike the plain hook it is allowed to take long, so it has no watchdog; everything before the
wait is what the plain hook does, bounded the same way.
"""

from __future__ import annotations

import json
import os

from roost.base import paths
from roost.base.unixhttp import Connection
from roost.truth.detect.hookevents import read

CONNECT_TIMEOUT = 0.5
"""Seconds to reach the daemon before the gate gives up and the dialog decides."""
WAIT_LIMIT = 7 * 24 * 3600.0
"""The longest the gate reads its answer: the daemon's ``gate_timeout_s`` ends the wait
first, and the host's own timeout for the hook (written beside it) ends the process."""
ANSWER_CAP = 65_536
"""Bytes the daemon's answer may hold: an allow or a deny with a reason is far less."""


def decide(harness: str, payload: dict) -> str | None:
    """The JSON to print for this event, or None to let the host's dialog decide. What it
    raises, ``rosterd-hook``'s main swallows: it exits 0 whatever happened."""
    from roost.faces.hook.pane import answered, stamp
    from roost.faces.hook.post import claim, post

    heard = read(harness, payload)
    if heard is None:
        return None
    gate, event = heard.agent.hook.gate, heard.event
    _, reason, name = stamp(heard)
    held = gate is not None and gate.holds(event.name, event.tool)
    body = claim(heard, reason, name) if held else None
    if gate is None or body is None:
        post(heard, reason, name)
        return None
    offered = gate.offered(payload)
    answer = _ask({"claim": body, "always": bool(offered)})
    if answer is None:
        return None
    decision = answer.get("decision")
    if decision in ("allow", "allow_always", "reject"):
        answered()
    said = gate.decided(decision, answer.get("reason"), offered)
    return None if said is None else json.dumps(said)


def _ask(body: dict) -> dict | None:
    """``POST /gate`` on the daemon's socket; its answer, or None when there is none to act on."""
    path = paths.api_socket_path()
    if not os.path.exists(path):
        return None
    with Connection(path, CONNECT_TIMEOUT) as connection:
        connection.connect()
        headers = {"Content-Type": "application/json", "User-Agent": "rosterd-hook"}
        connection.send("POST", "/gate", json.dumps(body).encode(), headers)
        connection.timeout = WAIT_LIMIT
        answer = connection.response()
        if answer.status != 200:
            return None
        found = json.loads(answer.read(ANSWER_CAP))
    return found if isinstance(found, dict) else None
