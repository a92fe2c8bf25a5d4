"""The first rule above precedence: a claim that an agent waits on a person is checked against
what the person can see. This module owns all of it: when the evidence is good, whose word it
ends, and how that is recorded.

Agents fire no hook when a person declines or dismisses a dialog (Claude Code's Esc), and a
hook outranks the screen, so a hook's (or an integration's) needs_attention would otherwise
outrank every later screen reading and stand for hours over an idle agent. :class:`Dialogs`
decides, per pane, when the screen's evidence that the dialog is gone is good:

- the session waits on a person by a higher source's word (a hook or an integration);
- the agent's manifest has a rule that reads a dialog, so "no dialog" means something (an
  agent whose screen roost cannot read keeps the hook's word, as before);
- the screen has read something other than a dialog, and no unreadable frame, for
  ``SETTLE`` seconds in a row, so a redraw, a resize or a dialog replaced by the next one
  is never taken for an answer;
- and that run began when a dialog the daemon saw left the screen after the hook's word
  (a dialog that has not been drawn yet is not gone), or the hook's word is older, by more
  than ``DRAWING`` seconds, than the moment the daemon learned of the pane (the daemon was not
  watching when it opened), or the screen
  drew a new frame of the agent at rest (at its prompt, done or failed) after the word and
  has kept it ``SETTLE`` seconds: an agent at its prompt asks nothing, whether or not the
  daemon caught the dialog in between (a person quicker than the reader, a loaded machine),
  and between a hook's word and its dialog the agent draws only work, never rest;
- or the word is a *reminder* (the manifest's ``[hook] reminders``: an event the agent sends
  only once its dialog has been on screen a while, as Claude Code's late ``Notification``):
  it is about a dialog already drawn, so a screen with no dialog on it says that dialog is
  answered, however late the reminder arrives.

Then the roster (:meth:`roost.truth.roster.Roster.overrule`) withdraws the higher sources'
needs_attention (:func:`waiting_above`) and takes the screen's claim, whose event is
:data:`DIALOG_CLOSED`, instead; ``explain`` keeps each ending (:class:`Overruling`) beside the
refusals. Nothing else ever ends a higher source's value but the second rule, a screen rule's
``overrules`` (:mod:`roost.truth.roster.overrules`). The daemon's screen reader
(:mod:`roost.daemon.screenwatch`) feeds :class:`Dialogs` its readings and acts on a verdict:
the overruling claim, and the pane's badge cleared as the CLI clears a declined dialog.
Deciding is pure and clocked from outside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roost.pane.state import words
from roost.truth.roster import precedence, records
from roost.truth.roster.provenance import ACTIVITY, ClaimRef, Counts, Provenance
from roost.truth.roster.times import to_wire

DIALOG_CLOSED = "dialog_closed"
"""The activity event of a session whose dialog left the screen with no word from its hook."""
SETTLE = 0.4
"""Seconds the screen must show no dialog before a hook's blocked ends; the same settle the
screen reader holds an idle reading to after a busy one, so both land on one re-read."""

DRAWING = 2.0
"""Seconds a word must predate the daemon's watch on a pane before the screen's "no dialog"
answers it: a word heard just before the daemon looked may be about a dialog not drawn yet
(an agent runs its hook, then draws). A closer one waits for other evidence."""


@dataclass
class _Pane:
    watched_from: float
    dialog_left: float | None = None
    clear_since: float | None = None
    rest_since: float | None = None
    rest_frame: object = None
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

    def read(self, pane: str, state: str | None, now: float, frame: object = None) -> None:
        """Note one reading of ``pane``: a state word, or None for a screen no rule read, and
        what identifies the frame read (a new frame at rest is news; the same one re-read is not)."""
        seen = self._panes.setdefault(pane, _Pane(watched_from=now))
        if state in words.BUSY or state is None:
            seen.rest_since = seen.rest_frame = None
        elif seen.rest_since is None or frame != seen.rest_frame:
            seen.rest_since, seen.rest_frame = now, frame
        if state == words.BLOCKED:
            seen.shown, seen.dialog_left, seen.clear_since = True, None, None
        elif state is None:
            seen.clear_since = None
        elif seen.clear_since is None:
            seen.clear_since = now
            if seen.shown:
                seen.shown, seen.dialog_left = False, now

    def watch(self, pane: str, now: float) -> None:
        """The daemon learned of ``pane`` (it was there when the daemon looked, or was just
        added): a word older than this may be about a dialog it never had the chance to see.
        The first reading can come later than this, and a word in between is not that old."""
        self._panes.setdefault(pane, _Pane(watched_from=now))

    def forget(self, pane: str) -> None:
        self._panes.pop(pane, None)

    def judge(
        self,
        pane: str,
        record: records.Record,
        holder: str | None,
        sees_dialogs: bool,
        now: float,
        reminders: frozenset[str] = frozenset(),
    ) -> Verdict | None:
        """Whether the blocked ``holder`` (the source whose activity shows) put on ``record``
        may end now; None when there is nothing to end or no evidence yet. ``reminders`` are
        the agent's events that only ever follow a dialog already drawn."""
        seen = self._panes.get(pane)
        if (
            seen is None
            or seen.clear_since is None
            or not sees_dialogs
            or record.activity != records.NEEDS_ATTENTION
            or holder is None
            or not precedence.outranks(holder, precedence.SCREEN)
        ):
            return None
        asked = record.activity_at if record.activity_at is not None else now
        since = seen.clear_since
        if seen.dialog_left is not None and seen.dialog_left >= asked:
            why = f"the dialog left the screen {_ago(now - seen.dialog_left)} ago"
        elif asked < seen.watched_from - DRAWING:
            why = "the dialog opened before the daemon was watching, and the screen shows none"
        elif record.activity_event in reminders:
            why = f"{record.activity_event} reminds of a dialog already drawn, and the screen shows none"
        elif seen.rest_since is not None and seen.rest_since >= asked:
            since = seen.rest_since
            why = f"the screen drew the agent at rest {_ago(now - since)} ago, after the word"
        else:
            return None
        held = now - since
        if held < self.settle:
            return Verdict(wait=self.settle - held)
        return Verdict(evidence=f"{why}; no dialog on screen for {_ago(held)}")


@dataclass(frozen=True)
class Overruling:
    """One needs_attention that evidence ended: whose it was, what ended it, why and when."""

    at: float
    ended: ClaimRef
    by: ClaimRef
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "at": to_wire(self.at),
            "source": self.ended.source,
            "ended": self.ended.to_json(),
            "by": self.by.to_json(),
            "evidence": self.evidence,
        }


def waiting_above(provenance: Provenance, source: str, counts: Counts) -> list[ClaimRef]:
    """The claims of sources above ``source`` whose needs_attention shows, or would show once
    the one above it is withdrawn: what must go for ``source``'s word to count. Empty when the
    session does not wait on a person by a higher source's word."""
    held = []
    for candidate in provenance.ranked(ACTIVITY, counts):
        if not precedence.outranks(candidate.ref.source, source):
            break
        if candidate.value.get("activity") != records.NEEDS_ATTENTION:
            break
        held.append(candidate.ref)
    return held


def _ago(seconds: float) -> str:
    return f"{max(0.0, seconds):.2f} s"
