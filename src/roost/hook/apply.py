"""Turning one hook event into a change of the pane's badge, through the agent's manifest."""

from __future__ import annotations

import os

from roost.agents import manifest
from roost.hook.events import HookEvent
from roost.state import panestate
from roost.state import words as w
from roost.tmux.server import Server


def _context(pane_id: str) -> str:
    return (
        f"You are running in roost pane {pane_id}. Other agents reach you with "
        f"`roost send {pane_id} …`; `roost whoami` prints this id. When you finish a turn "
        "your last message is kept as your reply for `roost read`.\n"
    )


def handle(harness: str, payload: dict) -> str | None:
    """Apply the event to this process's pane; returns text for the agent's context, if any."""
    pane_id = os.environ.get("TMUX_PANE")
    if not pane_id or not os.environ.get("TMUX"):
        return None
    agent = manifest.load(harness)
    if agent is None:
        return None
    event = HookEvent.parse(payload)
    if event.agent_id:
        return None  # a subagent's events are not the pane's: its output was not addressed to us
    action = agent.action(event.name, event.notification)
    server = Server(os.environ["TMUX"].split(",")[0])
    pane = panestate.read(server, pane_id)
    if pane is None:
        return None
    if event.session_id and event.cwd and os.path.isabs(event.cwd):
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
    elif action == "done":
        panestate.end_turn(server, pane, event.reply.encode() if event.reply else None)
    elif action == "error":
        panestate.fail_turn(server, pane, event.error or "the turn failed")
    elif action == "identify":
        return _context(pane_id) if agent.raw.get("session_context", True) else None
    return None
