"""When the screen may end a hook's 🛑: the dialog it was about has left the screen.

Agents fire no hook when a person declines or dismisses a dialog (Claude Code's Esc), and a
hook outranks the screen, so without this a declined dialog would read "needs input" in the
roster, the web app and ``roost status`` until the agent's next hook, hours later perhaps.
The roster's one rule above precedence (:meth:`roost.roster.Roster.overrule`) lets screen
evidence end it; this module decides, per pane, when the evidence is good:

- the session waits on a person by a higher source's word (a hook or an integration);
- the agent's manifest has a rule that reads a dialog, so "no dialog" means something (an
  agent whose screen roost cannot read keeps the hook's word, as before);
- the screen has read something other than a dialog, and no unreadable frame, for
  ``SETTLE`` seconds in a row, so a redraw, a resize or a dialog replaced by the next one
  is never taken for an answer;
- and that run began when a dialog the daemon saw left the screen after the hook's word
  (a dialog that has not been drawn yet is not gone), or the hook's word is older than the
  daemon's first look at the pane (the daemon was not watching when it opened).

Deciding is pure and clocked from outside; the screen reader does the reading and the acting.
"""

from __future__ import annotations

from dataclasses import dataclass

from roost.roster import records
from roost.roster.precedence import SCREEN, outranks
from roost.state import words

SETTLE = 0.4
"""Seconds the screen must show no dialog before a hook's blocked ends; the same settle the
screen reader holds an idle reading to after a busy one, so both land on one re-read."""


@dataclass
class _Pane:
    first_read: float
    dialog_left: float | None = None
    clear_since: float | None = None
    shown: bool = False


@dataclass(frozen=True)
class Verdict:
    """End the hook's blocked now (``evidence`` says why), or look again in ``wait`` seconds."""

    evidence: str | None = None
    wait: float | None = None


class Dialogs:
    """What each pane's screen last showed of a dialog, and whether a blocked may end."""

    def __init__(self, settle: float = SETTLE) -> None:
        self.settle = settle
        self._panes: dict[str, _Pane] = {}

    def read(self, pane: str, state: str | None, now: float) -> None:
        """Note one reading of ``pane``: a state word, or None for a screen no rule read."""
        seen = self._panes.setdefault(pane, _Pane(first_read=now))
        if state == words.BLOCKED:
            seen.shown, seen.dialog_left, seen.clear_since = True, None, None
        elif state is None:
            seen.clear_since = None
        elif seen.clear_since is None:
            seen.clear_since = now
            if seen.shown:
                seen.shown, seen.dialog_left = False, now

    def forget(self, pane: str) -> None:
        self._panes.pop(pane, None)

    def judge(
        self, pane: str, record: records.Record, holder: str | None, sees_dialogs: bool, now: float
    ) -> Verdict | None:
        """Whether the blocked ``holder`` (the source whose activity shows) put on ``record``
        may end now; None when there is nothing to end or no evidence yet."""
        seen = self._panes.get(pane)
        if (
            seen is None
            or seen.clear_since is None
            or not sees_dialogs
            or record.activity != records.NEEDS_ATTENTION
            or holder is None
            or not outranks(holder, SCREEN)
        ):
            return None
        asked = record.activity_at if record.activity_at is not None else now
        if seen.dialog_left is not None and seen.dialog_left >= asked:
            why = f"the dialog left the screen {_ago(now - seen.dialog_left)} ago"
        elif asked < seen.first_read:
            why = "the dialog opened before the daemon was watching, and the screen shows none"
        else:
            return None
        held = now - seen.clear_since
        if held < self.settle:
            return Verdict(wait=self.settle - held)
        return Verdict(evidence=f"{why}; no dialog on screen for {_ago(held)}")


def _ago(seconds: float) -> str:
    return f"{max(0.0, seconds):.2f} s"
