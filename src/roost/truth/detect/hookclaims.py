"""The claim a hook event makes: what the roster hears of an agent's own report.

The command hook (``rosterd-hook``, which finds its agent's process among its own ancestors)
and the daemon's HTTP hook route (whose agent is the kernel-attested process at the other end
of the connection) build the same claim here from the same :class:`~roost.truth.detect.hookevents.Heard`,
so a turn reads the same on the roster whichever way its events travelled.

The claim says what the hook read (``session_id``, ``hook_event_name``, ``cwd``,
``notification_type``), the activity word the manifest maps the event to, and which process
the event is about, with that process's ancestors so a harness nested in another session's
tree finds that session. Two actions make no claim: a tool starting (``tool``), which says only
that a turn goes on and is the most frequent event, and the ones a manifest ignores. Imports
stay minimal: this runs in every command hook.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.truth.detect.hookevents import Heard

WORDS = {
    "prompt": "working",
    "working": "working",
    "blocked": "blocked",
    "done": "done",
    "error": "error",
    "ready": "idle",
}
"""The roster's activity word for each hook action that claims one."""
EVENT_LIMIT = 64
NAME_LIMIT = 200
"""Characters of a pane's name a claim may carry (the claim schema's bound)."""
RECAP_LIMIT = 65536
"""Characters of a turn's reply a claim carries as its recap (the claim schema's bound)."""


def claims(heard: Heard) -> bool:
    """Whether the event makes a claim at all."""
    return heard.action in WORDS or heard.action == "identify"


def body(
    heard: Heard,
    process: list[int],
    ancestors: list[list[int]],
    reason: str | None = None,
    name: str | None = None,
    seq: int | None = None,
) -> dict | None:
    """The ``POST /claim`` body for this event about ``process`` (``[pid, start_ticks]``), or
    None when the event claims nothing.

    A dialog's claim carries what it asks as its pending request's summary: ``reason``, the
    badge's own, when the pane was badged (a notification after a dialog keeps the dialog's
    words there), else the event's. ``name`` is the pane's ``@roost-name``, so the roster
    names the session at its first event rather than at the next process scan. ``seq``
    numbers the event in its agent's order, where the poster knows it (the command hook, whose
    events a handed-off copy can deliver late): the roster refuses one older than the last.
    """
    agent, event, action = heard.agent, heard.event, heard.action
    if not claims(heard):
        return None
    fields: dict = {"harness": agent.name}
    if not event.agent_id:
        if event.session_id:
            fields["session_id"] = event.session_id
        if event.cwd and os.path.isabs(event.cwd):
            fields["cwd"] = event.cwd
        if name and len(name) <= NAME_LIMIT and name.isprintable():
            fields["name"] = name  # one line (a name that is not is the scan's to refuse, alone)
    if action == "done" and event.reply and not event.agent_id:
        # The turn's last message, as a headless session's recap: a script or a peer reads it
        # from the record (`GET /sessions/{key}`, MCP's read_state) wherever the pane runs.
        fields["recap"] = event.reply[:RECAP_LIMIT].encode("utf-8", "replace").decode("utf-8")
    if action == "blocked":
        fields["pending"] = {"summary": reason or event.dialog}
        if event.tool:
            fields["pending"]["tool"] = event.tool[:EVENT_LIMIT]
    claim: dict = {
        "source": "hook",
        "pid": process[0],
        "start_ticks": process[1],
        "ancestors": ancestors,
        "fields": fields,
    }
    if seq is not None:
        claim["seq"] = seq
    if event.name:
        detail = event.notification or (event.start if event.start in agent.hook.starts else None)
        said = f"{event.name}:{detail}" if detail else event.name
        claim["event"] = said[:EVENT_LIMIT]
    if action in WORDS:
        claim["activity"] = WORDS[action]
    return claim
