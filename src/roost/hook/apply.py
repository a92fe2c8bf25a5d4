"""Turning one hook event into a change of the pane's badge, through the agent's manifest."""

from __future__ import annotations

import os

from roost.state import panestate
from roost.state import words as w
from roost.text import as_bytes
from roost.tmux.server import Server

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.hook.events import Heard


def _context(pane_id: str) -> str:
    return (
        f"You are running in roost pane {pane_id}. Other agents reach you with "
        f"`roost send {pane_id} …`; `roost whoami` prints this id. When you finish a turn "
        "your last message is kept as your reply for `roost read`.\n"
    )


def handle(heard: Heard) -> tuple[str | None, str | None, str | None]:
    """Apply the event to its pane; returns text for the agent's context, if any, the reason
    the badge now gives for a dialog (for the claim to say the same), if it badged one, and the
    pane's name (``@roost-name``: the claim carries it, so the roster names the session at its
    first event rather than at the next process scan).

    An event the hook does nothing with never gets here (:func:`roost.hook.events.read`);
    one that changes nothing costs one tmux read.
    """
    here = _here()
    if here is None:
        return None, None, None
    pane_id, socket = here
    agent, event, action = heard.agent, heard.event, heard.action
    server = Server(socket)
    shared = False
    markers = agent.hook.shared_process
    if markers:  # most manifests name none, and then the hook need not import owner at all
        from roost.hook import owner

        shared = owner.runs_in_shared_process(markers)
        if shared:
            pane_id = owner.pane_holding(server, event.session_id)
            if pane_id is None:
                return None, None, None
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
    if action in ("identify", "ready"):
        return (_context(pane.id) if agent.session_context else None), None, name
    return None, None, name


def answered() -> None:
    """The gate's dialog was answered from rosterd: the turn goes on, so the pane's badge
    leaves blocked (a denied tool fires no hook of its own to say so)."""
    here = _here()
    if here is None:
        return
    server = Server(here[1])
    pane = panestate.read(server, here[0])
    if pane is not None and pane.opt(w.STATE) == w.BLOCKED:
        panestate.set_state(server, pane, w.WORKING)


def _here() -> tuple[str, str] | None:
    """The pane this hook runs in and its tmux server's socket, from the environment tmux
    gives a pane's processes; None outside tmux."""
    pane_id = os.environ.get("TMUX_PANE")
    tmux = os.environ.get("TMUX")
    return (pane_id, tmux.split(",")[0]) if pane_id and tmux else None
