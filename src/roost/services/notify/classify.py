"""Which activity changes are worth a notification, and what it says: pure, so the rule is
tested on its own.

Only a session finishing in the background matters: working -> blocked ("needs input") and
working or blocked -> idle ("done", or "error" when the turn failed), in the words every face
uses for those states (``roost.pane.state.words.HUMAN``). Starting to work, or anything from an
unknown state (a session just discovered, a daemon just restarted), is not news; nor is a
dialog that left the screen with no word from the agent: somebody at the terminal declined it.
A turn that ended done and is then found failed (the screen overruled its hook's done,
``roost.truth.roster.overrules``) is news, "error". The screen reader acts on the hook's done
at once, so the error comes within the notifier's grace and replaces the "done" still waiting
there: a person is told once, the right word. Found later (a daemon that was not watching),
the error is told after the done, as a correction.
"""

from __future__ import annotations

from roost.pane.state import words
from roost.truth.roster.attention import DIALOG_CLOSED
from roost.truth.roster.records import ACTIVE, IDLE, NEEDS_ATTENTION

NEEDS_INPUT = words.HUMAN[words.BLOCKED]
DONE = words.HUMAN[words.DONE]
ERROR = words.HUMAN[words.ERROR]

_BACKGROUND = {
    (ACTIVE, NEEDS_ATTENTION): NEEDS_INPUT,
    (ACTIVE, IDLE): DONE,
    (NEEDS_ATTENTION, IDLE): DONE,
}


def classify(
    before: str | None,
    after: str,
    event: str | None = None,
    state: str | None = None,
    was: str | None = None,
) -> str | None:
    """What to tell ("needs input", "done" or "error") when a session's activity went from
    ``before`` to ``after`` through ``event``, ``state`` being the record's state in roost's
    words and ``was`` the state before; None when that is not worth a notification."""
    if event == DIALOG_CLOSED:
        return None
    if before == after == IDLE and was == words.DONE and state == words.ERROR:
        return ERROR  # the turn told done failed after all
    what = _BACKGROUND.get((before or "", after))
    return ERROR if what == DONE and state == words.ERROR else what
