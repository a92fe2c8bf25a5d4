"""Who occupies a pane of roost's tmux server, and whether the agent there may be prompted.

A pane is a PTY that outlives the agents in it: each process that runs there is an *occupant*
(``occupant_id`` only grows), and the pane's occupant now is its newest live record. A prompt
may be written only to a complete integration identity: a live record whose harness and
harness session id are known and whose state came from the agent itself (launcher, ACP, an
integration report or a hook), not from its screen. The API's status rows
(:mod:`roost.faces.api.rows`), its fenced prompt and its waits (:mod:`roost.actions.prompt`,
:mod:`roost.actions.waits`) and the MCP server all read panes through here.
"""

from __future__ import annotations

from roost.pane.state import words
from roost.truth.roster import Roster, records
from roost.truth.roster.precedence import ACP, HOOK, INTEGRATION, LAUNCHER, SCREEN
from roost.truth.roster.records import Record

STATE_OF_ACTIVITY = words.WEB_OF_ACTIVITY
"""rosterd's activity in the web app's words (the vocabularies table in docs/contracts.md)."""

INTEGRATION_SOURCES = frozenset({LAUNCHER, ACP, INTEGRATION, HOOK})
SCREEN_SOURCES = frozenset({SCREEN})
INTEGRATION_CLASS, SCREEN_CLASS = "integration", "screen"


def pane_of(record: Record, socket: str | None) -> str | None:
    """The pane of roost's tmux server the record is about, or None (not in a pane, or in a
    pane of another tmux server: a foreign session)."""
    tmux = record.tmux or {}
    pane = tmux.get("pane")
    if socket is None or tmux.get("socket") != socket or not isinstance(pane, str):
        return None
    return pane


def occupants(roster: Roster, socket: str | None, pane: str) -> list[Record]:
    """The live records in a pane, oldest occupant first."""
    found = [
        record
        for record in roster.records()
        if record.liveness != records.ENDED and pane_of(record, socket) == pane
    ]
    return sorted(found, key=lambda record: record.occupant_id)


def current(roster: Roster, socket: str | None, pane: str) -> Record | None:
    """The pane's occupant now: its newest live record (occupant ids only grow)."""
    found = occupants(roster, socket, pane)
    return found[-1] if found else None


def source_class(roster: Roster, record: Record) -> str | None:
    """Whether the record's state came from the agent itself, from its screen, or neither."""
    view = roster.explain(record.session_key) or {}
    origin = view.get("fields", {}).get("activity") or {}
    source = origin.get("source")
    if source in INTEGRATION_SOURCES:
        return INTEGRATION_CLASS
    if source in SCREEN_SOURCES:
        return SCREEN_CLASS
    return None


def promptable(record: Record, source: str | None) -> bool:
    """A complete integration identity; see the module docstring."""
    return (
        source == INTEGRATION_CLASS
        and record.harness is not None
        and record.session_id is not None
        and record.liveness == records.LIVE
    )
