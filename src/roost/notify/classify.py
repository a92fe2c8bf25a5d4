"""Which activity changes are worth a notification: pure, so the rule is tested on its own.

Only a session finishing in the background matters: working -> blocked ("needs input") and
working or blocked -> idle ("done", or "error" when the turn failed: the words the web app
shows for these states). Starting to work, or anything from an unknown state (a
session just discovered, a daemon just restarted), is not news; nor is a dialog that left the
screen with no word from the agent: somebody at the terminal declined it.
"""

from __future__ import annotations

from roost.roster.attention import DIALOG_CLOSED
from roost.roster.records import ACTIVE, IDLE, NEEDS_ATTENTION

NEEDS_INPUT = "needs input"
DONE = "done"
ERROR = "error"

_BACKGROUND = {
    (ACTIVE, NEEDS_ATTENTION): NEEDS_INPUT,
    (ACTIVE, IDLE): DONE,
    (NEEDS_ATTENTION, IDLE): DONE,
}


def classify(before: str | None, after: str, event: str | None = None, failed: bool = False) -> str | None:
    """What to tell ("needs input", "done", or "error" for a turn that ended ``failed``) when a
    session's activity went from ``before`` to ``after`` through ``event``, or None when that is
    not worth a notification."""
    if event == DIALOG_CLOSED:
        return None
    what = _BACKGROUND.get((before or "", after))
    return ERROR if what == DONE and failed else what
