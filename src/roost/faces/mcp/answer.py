"""Answering a session's pending permission from MCP, through the one contract every face uses
(:mod:`roost.actions.permission`): a headless session's adapter or a gated pane's hook gets it,
a pane with no gate is refused ``answer_in_terminal``, and a stale answer is refused by what it
pins. The journal says it came from MCP, and which session (or process) asked.

``allow_always`` is a person's answer, refused unless the config says otherwise
(:mod:`roost.faces.mcp.grants`).
"""

from __future__ import annotations

from roost.actions import permission
from roost.actions.permission import ALLOW, ALLOW_ALWAYS, REJECT, Answer
from roost.actions.sessions import Door, Found
from roost.faces.mcp import grants
from roost.faces.mcp.caller import Caller
from roost.truth.roster import Record

VIA = "mcp"


def answer(
    door: Door,
    caller: Caller,
    found: Found,
    *,
    allow: bool,
    always: bool = False,
    reason: str | None = None,
    request_id: str | None = None,
    always_allowed: bool = False,
) -> Record:
    """Allow (once, or ``always`` where ``always_allowed``) or deny the permission the session
    ``found`` waits on; the record after."""
    grants.check_answer(allow=allow, always=always, always_allowed=always_allowed)
    option = (ALLOW_ALWAYS if always else ALLOW) if allow else REJECT
    given = Answer(option, reason, request_id, by=caller.label(), via=VIA, through=caller.through)
    return permission.answer(door, found, given)
