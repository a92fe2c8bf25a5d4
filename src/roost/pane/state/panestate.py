"""Changing a pane's badge: the only code that writes ``@roost-*`` options.

Every change is read-decide-write against one pane: read its options (one tmux call, done by
the caller through ``read``), decide here, write them back in one chained tmux call, then log
the event. A call that changes nothing writes nothing, which is what keeps the hook cheap.
"""

from __future__ import annotations

import os
import time

from roost.base import paths
from roost.base.text import shown, well_formed
from roost.pane.state import words as w
from roost.pane.state.layout import REWRITE
from roost.pane.tmux.panes import Pane, pane
from roost.pane.tmux.server import THEN, Server

DECLINED = "the dialog was declined or dismissed"
# Claude Code and Codex write their transcript within ~20 ms of a dialog opening; a write
# later than this is the dialog being answered or dismissed.
DIALOG_SETTLE = 1.0


_RELAYOUT = (THEN, *REWRITE)
"""Chained onto a change tmux fires no hook for (a name, an identity): the server rewrites the
layout record in the background, so the caller (the hook, a verb) waits for nothing."""


def read(server: Server, pane_id: str) -> Pane | None:
    """One pane with every roost option, in one tmux call."""
    return pane(server, pane_id, w.PANE_OPTIONS)


def turn_number(p: Pane) -> int:
    return w.to_int(p.opt(w.TURN)) or 0


def recording() -> bool:
    return paths.record_path() is not None


def _one_line(text: str, limit: int = 200) -> str:
    """A reason as the badge keeps it: one line, its whitespace runs made one space, any other
    control character (an ESC from a tool's input) written out rather than kept, since every
    face shows the reason as it is, and U+FFFD for what was not UTF-8 (``roost state error``
    given such bytes), which the events log, written as UTF-8, could not hold."""
    return shown(" ".join(well_formed(text).split()))[:limit]


class _Change:
    """Option writes gathered for one chained ``set-option`` call."""

    def __init__(self, p: Pane) -> None:
        self.pane = p
        self.args: list[str] = []

    def set(self, name: str, value: str | int | None) -> None:
        value = "" if value is None else str(value)
        if (self.pane.options.get(name) or "") == value:
            return
        if self.args:
            self.args.append(THEN)
        if value:
            self.args += ["set-option", "-p", "-t", self.pane.id, name, value]
        else:
            self.args += ["set-option", "-p", "-u", "-t", self.pane.id, name]
        self.pane.options[name] = value

    @property
    def pending(self) -> bool:
        """Whether anything differs from what the pane had."""
        return bool(self.args)

    def commit(self, server: Server) -> bool:
        if not self.args:
            return False
        return server.run(*self.args, check=False).returncode == 0


def _log(p: Pane, event: str, before: str | None, after: str | None, reason: str) -> None:
    from roost.pane.state.events import Log  # imported only when something changed: the hook's rare case

    log = Log.from_env()
    if log is None:
        return
    log.append(
        {
            "server": p.server_key,
            "pane": p.id,
            "window": p.window_id,
            "session_id": p.opt(w.SESSION_ID),
            "event": event,
            "from": before,
            "to": after,
            "turn": turn_number(p) if recording() and turn_number(p) else None,
            "reason": reason,
        }
    )


def set_state(server: Server, p: Pane, word: str, reason: str = "", change: _Change | None = None) -> bool:
    """Badge ``p`` with ``word``; returns True when anything changed.

    ``change`` carries writes that must land in the same tmux call as the badge: a reader
    that sees a turn recorded as ended must also see how it ended.

    Moving to working from anything but busy begins a new turn. A second dialog on a pane
    already blocked is logged as ``blocked_on``. A blocked pane is only left by a real event
    (the tool ran, the turn ended), never by a stray notification.
    """
    word = w.normalise(word)
    before = p.opt(w.STATE)
    reason = _one_line(reason) if word in (w.BLOCKED, w.ERROR) else ""
    change = change or _Change(p)
    if word == w.WORKING and before not in w.BUSY:
        change.set(w.TURN, turn_number(p) + 1)
    if word in w.BUSY and before not in w.BUSY:
        from roost.pane.state import jobs  # a turn beginning, not the hook's every event

        change.set(w.JOB, jobs.foreground_job(p.pid))
    new_dialog = before == w.BLOCKED == word and reason and reason != (p.opt(w.REASON) or "")
    if word == w.BLOCKED and (before != w.BLOCKED or new_dialog):
        # Stamped to the millisecond: agents write their transcript as a dialog opens, and
        # only a write well after the opening can mean the dialog was answered or dismissed.
        transcript = p.opt(w.TRANSCRIPT)
        change.set(w.DIALOG, f"{time.time():.3f} {transcript}" if transcript else None)
    elif word != w.BLOCKED and before == w.BLOCKED:
        change.set(w.DIALOG, None)
    if word not in w.BUSY:
        change.set(w.JOB, None)
    if before != word:
        change.set(w.SINCE, int(time.time()))
    change.set(w.STATE, word)
    change.set(w.REASON, reason)
    if not change.pending:
        return False
    # The log line goes first: it is how a pane that closed is remembered, and a writer in a
    # pane that is closing can be killed between the two writes. Then a reader that saw the
    # badge always finds the line, never a badge the log does not know.
    if before != word:
        _log(p, "state", before, word, reason)
    elif new_dialog:
        _log(p, "blocked_on", before, word, reason)
    return change.commit(server)


def interrupt_turn(server: Server, p: Pane) -> bool:
    """The agent says the turn was interrupted (a declined dialog, Esc): it ends, saying nothing.

    Unlike a Stop, an interruption ends the turn even while the badge reads blocked: the
    agent itself reports that the dialog is gone.
    """
    turn = turn_number(p)
    change = _Change(p)
    _stage_reply(change, p, turn, None)
    change.set(w.TURN_DONE, turn)
    change.set(w.DIALOG, None)
    return set_state(server, p, w.DONE, change=change)


def end_turn(server: Server, p: Pane, reply: bytes | None) -> bool:
    """Record the turn's reply (or clear it when the turn said nothing), then badge done.

    A turn that ends while a dialog is still open is held back: the badge must keep
    saying blocked until the dialog is answered.
    """
    if p.opt(w.STATE) == w.BLOCKED:
        return False
    turn = turn_number(p)
    change = _Change(p)
    _stage_reply(change, p, turn, reply)
    change.set(w.TURN_DONE, turn)
    return set_state(server, p, w.DONE, change=change)


def finish_turn(server: Server, p: Pane) -> bool:
    """``roost state done`` from an adapter-less agent: the turn ends with what it recorded.

    A reply kept with ``roost reply`` during this turn stays; otherwise the turn said
    nothing, so the previous turn's reply is cleared rather than served as this one's.
    """
    turn = turn_number(p)
    change = _Change(p)
    if recording() and w.to_int(p.opt(w.REPLY_TURN)) != turn:
        _set_reply_turn(change, p, None)
    change.set(w.TURN_DONE, turn)
    return set_state(server, p, w.DONE, change=change)


def _set_reply_turn(change: _Change, p: Pane, turn: int | None) -> None:
    """Point the pane at its current kept reply, in the option and beside the replies.

    The file copy is what lets ``roost read %N`` answer after the pane has closed.
    """
    from roost.pane.state import replies

    change.set(w.REPLY_TURN, turn)
    replies.mark_current(p.server_key, p.id, turn)


def _stage_reply(change: _Change, p: Pane, turn: int, reply: bytes | None) -> None:
    """Keep ``reply`` as turn ``turn``'s, or clear the current reply when there is none.

    Turn 0 is a pane no prompt has numbered yet (a self-badging program that never said
    working): its reply is kept too, as turn 0, which readers serve with no turn number and
    ``--turn`` can never name. The next numbered turn replaces or clears it like any other.
    """
    from roost.pane.state import replies  # its file handling is needed only when a turn ends

    if recording():
        kept = bool(reply and replies.keep_reply(p.server_key, p.id, turn, reply))
        _set_reply_turn(change, p, turn if kept else None)
    else:
        text = replies.truncate(reply).decode(errors="replace") if reply else None
        change.set(w.REPLY, text)


def record_reply(server: Server, p: Pane, reply: bytes) -> bool:
    """``roost reply``: keep what the agent just said for the current turn, badge unchanged."""
    change = _Change(p)
    _stage_reply(change, p, turn_number(p), reply)
    return change.commit(server) or True


def fail_turn(server: Server, p: Pane, reason: str) -> bool:
    """An errored turn publishes no answer; the previous reply stays, marked stale by readers."""
    change = _Change(p)
    change.set(w.TURN_DONE, turn_number(p))
    return set_state(server, p, w.ERROR, reason, change=change)


def spend(server: Server, pane_id: str, spent: str | None, budget: str | None) -> bool:
    """Write what rosterd counted of the pane's session (``spent``) and the budget it is near
    or over (``budget``), each compact JSON or None: what ``roost status`` shows and what
    ``roost send`` checks with no daemon to ask. Changes nothing when both already read so."""
    found = pane(server, pane_id, (w.SPEND, w.BUDGET))
    if found is None:
        return False
    change = _Change(found)
    change.set(w.SPEND, spent)
    change.set(w.BUDGET, budget)
    return change.commit(server)


def identify(
    server: Server, p: Pane, session_id: str, cwd: str, harness: str, transcript: str | None
) -> bool:
    """Record who the agent in the pane is; an event that omits the transcript keeps it.

    A new session id is a new conversation, so its identity is written whole, nulls included.
    """
    same_session = p.opt(w.SESSION_ID) == session_id
    change = _Change(p)
    change.set(w.SESSION_ID, session_id)
    change.set(w.CWD, cwd)
    change.set(w.HARNESS, harness)
    relayout = change.pending  # a new identity is part of the layout record; a transcript is not
    if transcript or not same_session:
        change.set(w.TRANSCRIPT, transcript)
    if relayout:
        change.args += _RELAYOUT
    return change.commit(server)


def dialog_opened(p: Pane) -> float | None:
    """When the pane's open dialog was badged (epoch seconds), or None when none is recorded."""
    record = p.opt(w.DIALOG)
    if p.opt(w.STATE) != w.BLOCKED or not record:
        return None
    opened, _, _ = record.partition(" ")
    try:
        return float(opened)
    except ValueError:
        return None


def transcript_moved(p: Pane) -> bool:
    """Whether the agent wrote its transcript well after the pane's dialog opened.

    Agents write to it when a dialog is answered or dismissed, so a transcript newer than the
    dialog means the dialog is no longer open.
    """
    opened = dialog_opened(p)
    _, _, transcript = (p.opt(w.DIALOG) or "").partition(" ")
    if opened is None or not transcript:
        return False
    try:
        modified = os.stat(transcript).st_mtime
    except OSError:
        return False
    return modified > opened + DIALOG_SETTLE


def clear_declined(server: Server, p: Pane) -> bool:
    """End a 🛑 whose dialog is gone (the agent fires no hook for a decline): state null, and
    the ``blocked → null`` line in the events log with the declined reason."""
    if p.opt(w.STATE) != w.BLOCKED:
        return False
    change = _Change(p)
    for name in (w.STATE, w.REASON, w.DIALOG, w.JOB):
        change.set(name, None)
    change.set(w.SINCE, int(time.time()))
    _log(p, "state", w.BLOCKED, None, DECLINED)  # first, as in set_state
    return change.commit(server)


def clear_if_declined(server: Server, p: Pane) -> bool:
    """Clear a 🛑 whose dialog was declined, when the transcript says so."""
    return transcript_moved(p) and clear_declined(server, p)


def label(server: Server, pane_id: str, name: str, *, view: bool = False) -> bool:
    """Name a pane roost just opened (spawn, split, view); a view is also marked as one.

    The mark is what lets the next view of the same name replace this one without ever
    touching a pane a person named, or one ``split -n`` gave the same name.
    """
    args = ["set-option", "-p", "-t", pane_id, w.NAME, name]
    if view:
        args += [THEN, "set-option", "-p", "-t", pane_id, w.VIEW, "1"]
    return server.run(*args, *_RELAYOUT, check=False).returncode == 0


def worktree(server: Server, pane_id: str, path: str, branch: str) -> bool:
    """Say on the pane which git worktree and branch its agent was given (``status --json``
    reads them back; ``close`` knows what it may leave)."""
    args = ["set-option", "-p", "-t", pane_id, w.WORKTREE, path, THEN]
    args += ["set-option", "-p", "-t", pane_id, w.BRANCH, branch]
    return server.run(*args, *_RELAYOUT, check=False).returncode == 0


def mark_seen(server: Server, p: Pane) -> bool:
    """A person looked at a finished pane: done becomes idle."""
    if p.opt(w.STATE) != w.DONE:
        return False
    return set_state(server, p, w.IDLE)
