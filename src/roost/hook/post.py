"""Posting a hook's claim to the daemon, after the pane is stamped: ``POST /claim`` on its socket.

The claim says what the hook read (``session_id``, ``hook_event_name``, ``cwd``,
``notification_type``), the activity word the manifest maps the event to, and which process
the event is about. That process is the hook's nearest ancestor that is not a shell: harnesses
run hooks either directly (Pi, OpenCode: the parent is the harness) or through ``sh -c`` (Claude
Code: the shell's parent is the harness), so skipping shells names the harness process itself,
the same process the scan roots the session at. Its own ancestors travel along so a harness
nested in another session's tree finds that session. Hooks running in a harness's shared
background process (``[hook] shared_process``) post nothing: that process is no one session.

Two events post nothing: a tool starting (``tool``), which says only that a turn goes on and is
the most frequent event, and ones the manifest ignores. Everything is bounded: no socket file
means no daemon and costs one failed ``connect``; a daemon that accepts and never answers costs
:data:`TIMEOUT`. Nothing here raises. Imports stay minimal and are made only to post
(:mod:`roost.unixhttp`, which imports nothing but ``_socket``; :mod:`roost.cjson` rather than
``json``): this runs on every hook event.
"""

from __future__ import annotations

import os
import time

from roost import cjson, paths, procfs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.hook.events import Heard

TIMEOUT = 0.25
"""Seconds the whole exchange with the daemon may take; the hook's budget is 800 ms in all."""
_WORDS = {
    "prompt": "working",
    "working": "working",
    "blocked": "blocked",
    "done": "done",
    "error": "error",
    "ready": "idle",
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox"})
_EVENT_LIMIT = 64
_NAME_LIMIT = 200
"""Characters of a pane's name a claim may carry (the claim schema's bound)."""
_RECAP_LIMIT = 65536
"""Characters of a turn's reply a claim carries as its recap (the claim schema's bound)."""
_ANCESTORS_KEPT = 16


def agent_process() -> tuple[list[int], list[list[int]]] | None:
    """The harness process as ``[pid, start_ticks]`` and its ancestors, nearest first."""
    pid = os.getppid()
    found: list[int] | None = None
    ancestors: list[list[int]] = []
    while pid > 1 and len(ancestors) < _ANCESTORS_KEPT:
        stat = procfs.stat(pid)
        if stat is None or stat.gone:
            break
        if found is not None:
            ancestors.append([pid, stat.start_ticks])
        elif stat.name.decode(errors="replace") not in _SHELLS:
            found = [pid, stat.start_ticks]
        pid = stat.ppid
    return None if found is None else (found, ancestors)


def claim(heard: Heard, reason: str | None = None, name: str | None = None) -> dict | None:
    """The claim body for this event, or None when it should post nothing.

    A dialog's claim carries what it asks as its pending request's summary: ``reason``, the
    badge's own, when the pane was badged (a notification after a dialog keeps the dialog's
    words there), else the event's.
    """
    agent, event, action = heard.agent, heard.event, heard.action
    if action not in _WORDS and action != "identify":
        return None
    markers = agent.hook.shared_process
    if markers:  # imported only for a manifest that names one, as in apply
        from roost.hook import owner

        if owner.runs_in_shared_process(markers):
            return None
    process = agent_process()
    if process is None:
        return None
    (pid, ticks), ancestors = process
    fields: dict = {"harness": agent.name}
    if not event.agent_id:
        if event.session_id:
            fields["session_id"] = event.session_id
        if event.cwd and os.path.isabs(event.cwd):
            fields["cwd"] = event.cwd
        if name and len(name) <= _NAME_LIMIT and name.isprintable():
            fields["name"] = name  # one line (a name that is not is the scan's to refuse, alone)
    if action == "done" and event.reply and not event.agent_id:
        # The turn's last message, as a headless session's recap: a script or a peer reads it
        # from the record (`GET /sessions/{key}`, MCP's read_state) wherever the pane runs.
        fields["recap"] = event.reply[:_RECAP_LIMIT].encode("utf-8", "replace").decode("utf-8")
    if action == "blocked":
        fields["pending"] = {"summary": reason or event.dialog}
        if event.tool:
            fields["pending"]["tool"] = event.tool[:_EVENT_LIMIT]
    body: dict = {
        "source": "hook",
        "pid": pid,
        "start_ticks": ticks,
        "ancestors": ancestors,
        "fields": fields,
    }
    if event.name:
        detail = event.notification or (event.start if event.start in agent.hook.starts else None)
        name = f"{event.name}:{detail}" if detail else event.name
        body["event"] = name[:_EVENT_LIMIT]
    if action in _WORDS:
        body["activity"] = _WORDS[action]
    return body


def send(body: dict, path: str, timeout: float = TIMEOUT) -> int | None:
    """POST the claim; the response's status code, or None when no daemon answered in time."""
    from roost.unixhttp import Connection

    data = cjson.dumps(body).encode()
    with Connection(path, deadline=time.monotonic() + timeout) as connection:
        try:
            connection.connect()
            connection.send("POST", "/claim", data, {"Content-Type": "application/json"})
            return connection.response().status
        except OSError:
            return None


def post(heard: Heard, reason: str | None = None, name: str | None = None) -> None:
    """Tell the daemon about this event, if one is listening; never raises, never waits long.

    ``reason`` is the dialog the pane's badge now names, when the hook badged one; ``name``
    the pane's, when it has one.
    """
    try:
        path = paths.api_socket_path()
        if not os.path.exists(path):
            return
        body = claim(heard, reason, name)
        if body is not None:
            send(body, path)
    except Exception:
        return
