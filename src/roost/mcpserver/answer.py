"""Answering a session's pending permission from MCP: the one place that decides how.

A headless session's request is answered over ACP by the runner. A terminal pane's dialog is
not answered here: it is refused with ``answer_in_terminal``, and the person answers where the
dialog is drawn.
"""

from __future__ import annotations

from roost.errors import Conflict
from roost.roster import Record
from roost.runner.runner import Runner

IN_TERMINAL = "answer_in_terminal"


def answer(
    runner: Runner | None, key: str, *, allow: bool, always: bool = False, reason: str | None = None
) -> Record:
    """Allow (once, or ``always``) or deny the permission ``key`` waits on; the record after."""
    if runner is None or not runner.owns(key):
        raise Conflict(
            f"{key} is not a headless session: answer its dialog in its terminal", code=IN_TERMINAL
        )
    return runner.answer(key, allow=allow, always=always, reason=reason)
