"""A pane's badge, read as what a hook said: roost's hooks write ``@roost-*`` pane options.

The options outlive the daemon, which is what lets a restarted daemon rebuild every pane's
state from one ``list-panes -a``: the badge is the last word the agent's hooks said, so it is
claimed with source ``hook`` and dated by ``@roost-since``, when the badge last changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roost.pane.state import words as w
from roost.pane.tmux.panes import Pane
from roost.truth.roster import records

EVENTS = {w.BLOCKED: "permission"}
"""The activity event a badge word stands for, where it is not the word itself."""
CLEARED = "cleared"
"""The event of a badge that disappeared (a dialog declined or a pane forgotten): idle again."""


@dataclass(frozen=True)
class Badge:
    """What a pane's options say: the state word, when it was set, and the session's identity."""

    word: str
    since: float | None
    reason: str | None
    fields: tuple[tuple[str, Any], ...]

    @property
    def activity(self) -> str:
        return records.to_activity(self.word)

    @property
    def event(self) -> str:
        return EVENTS.get(self.word, self.word)

    def claim_fields(self) -> dict[str, Any]:
        """The record fields the badge sets; error reasons and dialogs travel with the activity."""
        claimed = dict(self.fields)
        if self.word == w.ERROR:
            claimed["error_reason"] = self.reason or w.ERROR
        elif self.word == w.BLOCKED and self.reason:
            claimed["pending"] = {"summary": self.reason}
        return claimed


_IDENTITY = (("session_id", w.SESSION_ID), ("cwd", w.CWD), ("harness", w.HARNESS), ("name", w.NAME))


def badged(pane: Pane) -> bool:
    """Whether the pane has a badge (what :func:`read` would not return None for)."""
    return pane.opt(w.STATE) is not None


def read(pane: Pane) -> Badge | None:
    """The pane's badge, or None when it has none."""
    word = pane.opt(w.STATE)
    if word is None:
        return None
    since = w.to_int(pane.opt(w.SINCE))
    identity = tuple((field, value) for field, option in _IDENTITY if (value := pane.opt(option)))
    return Badge(w.normalise(word), float(since) if since else None, pane.opt(w.REASON), identity)


def shows(badge: Badge, record: records.Record | None) -> bool:
    """Whether the record already says what the badge says, so claiming it again adds nothing
    (a hook that posted its claim to the daemon also wrote the badge); a badge that moved from
    done to idle (a person looked at the pane) says something new though the activity is idle
    either way. A dialog's badge knows
    only what it asks; the record's request has more (its id, when it opened), so the two
    agree when they ask the same."""
    if record is None:
        return False
    claimed = badge.claim_fields()
    if (
        record.activity != badge.activity
        or record.state != badge.word
        or record.error_reason != claimed.get("error_reason")
        or _asks(record.pending) != _asks(claimed.get("pending"))
    ):
        return False
    return all(getattr(record, field) == value for field, value in badge.fields)


def _asks(pending: dict[str, Any] | None) -> str | None:
    """What a pending request asks (its summary), or None when there is no request."""
    return pending.get("summary") if pending else None
