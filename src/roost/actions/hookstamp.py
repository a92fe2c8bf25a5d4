"""Stamping one hook event on its pane: the badge, the turn, the kept reply, the events log.

Both ways an agent's hook reaches roost come here: the command hook (``rosterd-hook``, in the
agent's pane, which knows its pane from ``$TMUX_PANE``) and the daemon's HTTP hook route (which
knows it from the pane the kernel-attested poster runs in). What the manifest maps the event to
is the one thing that decides what changes, so the two cannot stamp a turn differently.
"""

from __future__ import annotations

import os

from roost.base.text import as_bytes
from roost.pane.state import panestate
from roost.pane.state import words as w

CONTEXT_ACTIONS = ("identify", "ready")
"""The actions at a session's start, when an agent that asks is told its pane (:func:`context`)."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.pane.tmux.server import Server
    from roost.truth.detect.hookevents import Heard


def context(pane_id: str) -> str:
    """What an agent that asks for it (``session_context``) is told at its start."""
    return (
        f"You are running in roost pane {pane_id}. Other agents reach you with "
        f"`roost send {pane_id} …`; `roost whoami` prints this id. When you finish a turn "
        "your last message is kept as your reply for `roost read`.\n"
    )


def tells(heard: Heard) -> bool:
    """Whether stamping ``heard`` may give the agent text to read (:func:`stamp`'s first
    value): only an agent that asks for its session's context, at its start."""
    return heard.action in CONTEXT_ACTIONS and heard.agent.session_context


def stamp(
    heard: Heard, server: Server, pane_id: str, *, shared: bool = False
) -> tuple[str | None, str | None, str | None]:
    """Apply the event to pane ``pane_id``; returns text for the agent's context, if any, the
    reason the badge now gives for a dialog (for the claim to say the same), if it badged one,
    and the pane's name (``@roost-name``: the claim carries it, so the roster names the session
    at its first event rather than at the next process scan).

    ``shared``: the event came from a harness's background process that serves several panes,
    so it does not say which session the pane holds. An event that changes nothing costs one
    tmux read.
    """
    agent, event, action = heard.agent, heard.event, heard.action
    pane = panestate.read(server, pane_id)
    if pane is None:
        return None, None, None
    name = pane.opt(w.NAME)
    if not shared and not event.agent_id and event.session_id and event.cwd and os.path.isabs(event.cwd):
        panestate.identify(server, pane, event.session_id, event.cwd, agent.name, event.transcript)
    if action == "prompt" or action == "working":
        panestate.set_state(server, pane, w.WORKING)
    elif action == "tool":
        if pane.opt(w.STATE) != w.BLOCKED:
            panestate.set_state(server, pane, w.WORKING)
    elif action == "blocked":
        reason = event.dialog
        if pane.opt(w.STATE) == w.BLOCKED and event.notification:
            reason = pane.opt(w.REASON) or reason  # the dialog's own hook said it better
        panestate.set_state(server, pane, w.BLOCKED, reason)
        return None, pane.opt(w.REASON), name
    elif action == "done":
        panestate.end_turn(server, pane, as_bytes(event.reply) if event.reply else None)
    elif action == "interrupt":
        panestate.interrupt_turn(server, pane)
    elif action == "error":
        panestate.fail_turn(server, pane, event.error or "the turn failed")
    elif action == "ready":
        panestate.set_state(server, pane, w.IDLE)
    if action in CONTEXT_ACTIONS:
        return (context(pane.id) if agent.session_context else None), None, name
    return None, None, name


def answered(server: Server, pane_id: str) -> None:
    """A gate's dialog was answered from rosterd: the turn goes on, so the pane's badge leaves
    blocked (a denied tool fires no hook of its own to say so)."""
    pane = panestate.read(server, pane_id)
    if pane is not None and pane.opt(w.STATE) == w.BLOCKED:
        panestate.set_state(server, pane, w.WORKING)
