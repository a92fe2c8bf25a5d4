"""``roost send [--force] [--json] [--from LABEL] TARGET MESSAGE…|-``: prompt an agent, provably.

The text goes in as one bracketed paste, exactly once, is looked for on screen before Enter is
pressed, and the Enter is looked for leaving the input line. On a target whose badge reads
done or idle, send then waits (bounded) for the agent's own hook to begin a new turn and names
it: ``%N TURN`` on stdout, so ``wait-done --turn`` and ``read --turn`` can ask about this
prompt and no other. Flags go before the target; after it everything is message text, and a
lone ``-`` reads the message from stdin (for briefings longer than one argument may be).

Exit codes: 0 submitted, and proven (a turn began, or the text showed and then left the input
line); 1 usage, or tmux refused the paste (nothing can have arrived: a retry is safe); 2 the
target is gone or dead, or ``--from`` is malformed; 3 the target is blocked; 4 the text was
pasted and Enter pressed but nothing proves it was submitted — a program that draws nothing,
an Enter not read in time, no turn begun (never resend: the prompt may be running).

This is a hot verb: it imports the state layer only when it needs it.
"""

from __future__ import annotations

import sys
import time

from roost.base import paths
from roost.base.errors import (
    OVER_BUDGET,
    Blocked,
    DeliveredNoTurn,
    InvalidValue,
    OverBudget,
    TargetGone,
    UsageError,
)
from roost.pane.state import words as w
from roost.pane.tmux import paste, targets
from roost.pane.tmux.panes import Pane, pane
from roost.pane.tmux.server import Server

USAGE = "usage: roost send [--force] [--json] [--from LABEL] TARGET MESSAGE"
READY_TIMEOUT = "@roost-send-ready-timeout"
TURN_TIMEOUT = "@roost-send-turn-timeout"
READY_DEFAULT, TURN_DEFAULT, TURN_MAX = 15, 10, 120
WATCH = (w.STATE, w.TURN, w.REASON)
TURN_POLL = 0.05


class Call:
    """What was asked for. (A plain class: importing ``dataclasses`` would cost every send
    ~10 ms at start.)"""

    __slots__ = ("as_json", "force", "label", "target", "text")

    def __init__(
        self, target: str, text: str, force: bool = False, as_json: bool = False, label: str | None = None
    ) -> None:
        self.target = target
        self.text = text
        self.force = force
        self.as_json = as_json
        self.label = label


def parse(args: list[str]) -> Call:
    """Flags only before the target: after it, ``--force`` is just a word of the message."""
    rest = list(args)
    force = as_json = False
    label = None
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--force":
            force = True
        elif flag == "--json":
            as_json = True
        elif flag == "--from" and rest:
            label = rest.pop(0)
        else:
            raise UsageError(USAGE)
    # A lone "-" reads the message from stdin: one argument cannot exceed 128 KB on Linux.
    if rest[1:] == ["-"]:
        text = sys.stdin.buffer.read().decode(errors="surrogateescape")
    else:
        text = " ".join(rest[1:])
    if len(rest) < 2 or not text:
        raise UsageError(USAGE)
    if label is not None:
        label = _checked_label(label)
    return Call(rest[0], text, force, as_json, label)


def _checked_label(label: str) -> str:
    """One word, at most 64 bytes, printable, not dash-first; a bare ``%N`` means ``pane:%N``."""
    word = label.isprintable() and " " not in label and not label.startswith("-")
    if not label or not word or len(label.encode(errors="surrogateescape")) > 64:
        raise InvalidValue(
            f"--from must be one word of at most 64 bytes, with no space or control character, "
            f"not starting with '-' (got {label!r})"
        )
    return f"pane:{label}" if _bare_pane(label) else label


def _bare_pane(label: str) -> bool:
    """Whether ``label`` is a bare ``%N``: what ``%[0-9]+`` matches, without importing ``re``,
    which would cost every send ~8 ms at start."""
    number = label[1:]
    return label[:1] == "%" and number.isascii() and number.isdigit()


def seconds(value: str | None, default: int, most: int | None = None) -> int:
    """A whole number of seconds from a tmux option; anything else is the default."""
    if not value or not (value.isascii() and value.isdigit()):
        return default
    return int(value) if most is None else min(int(value), most)


def _agent_pane(panes: list[Pane]) -> Pane:
    """A window's agent pane (the active one if several), else the window's active pane."""
    agents = [p for p in panes if p.opt(w.STATE)] or panes
    return next((p for p in agents if p.active), agents[0])


def _refuse_if_blocked(call: Call, state: str | None, reason: str | None) -> None:
    if state == w.BLOCKED and not call.force:
        why = reason or "a dialog is open"
        raise Blocked(f"{call.target} needs input: {why} — retry later or pass --force")


def _refuse_if_over_budget(call: Call, budget: str | None) -> None:
    """A budget the daemon put on the pane holds it (``@roost-budget``, state ``exceeded``):
    nothing is sent, whatever ``--force`` says, until a person lifts it."""
    if not budget:
        return
    import json

    try:
        held = json.loads(budget)
    except ValueError:
        return
    if isinstance(held, dict) and held.get("state") == "exceeded":
        lift = f" — {held['lift']} lets it through" if isinstance(held.get("lift"), str) else ""
        raise OverBudget(f"{call.target} is over budget: {held.get('reason')}{lift}", code=OVER_BUDGET)


def _turn(values: dict[str, str]) -> int:
    return w.to_int(values.get(w.TURN)) or 0


class Outcome:
    """The pane a send went to, its state before and after, and the turn that began, if one did."""

    __slots__ = ("before", "pane", "started", "state", "turn")

    def __init__(
        self,
        pane: Pane,
        before: str | None,
        state: str | None,
        started: bool = False,
        turn: int | None = None,
    ) -> None:
        self.pane = pane
        self.before = before
        self.state = state
        self.started = started
        self.turn = turn


def _wait_for_turn(server: Server, pane_id: str, before: int, bound: int) -> Pane:
    """The pane once its turn counter passes ``before``; exit 4 if the bound or the pane runs out."""
    until = time.monotonic() + bound
    while True:
        now = pane(server, pane_id, (w.STATE, w.TURN))
        if now is None or now.dead:
            raise DeliveredNoTurn(
                f"submitted to {pane_id} but the pane went away before a turn began — do not resend"
            )
        if (w.to_int(now.opt(w.TURN)) or 0) > before:
            return now
        if time.monotonic() >= until:
            raise DeliveredNoTurn(f"submitted to {pane_id} but no turn began within {bound}s — do not resend")
        time.sleep(TURN_POLL)


def _unproven(pane_id: str, shown: bool) -> str:
    """Why a pasted, entered text is not proven submitted, for a pane with no turn to watch."""
    if shown:
        return f"pasted into {pane_id} and pressed Enter, but it never left the input line — do not resend"
    return (
        f"pasted into {pane_id} once and pressed Enter, but its program showed nothing that proves "
        "the text arrived — do not resend"
    )


def _deliver(server: Server, call: Call, target: Pane, data: bytes) -> Outcome:
    """Paste, submit and (for a done or idle agent) watch a turn begin, holding the pane's lock."""
    ready = seconds(target.opt(READY_TIMEOUT), READY_DEFAULT)
    bound = seconds(target.opt(TURN_TIMEOUT), TURN_DEFAULT, TURN_MAX)
    first = paste.look(server, target.id, WATCH)
    if first is None or first.dead:
        raise TargetGone(f"pane {target.id} is gone")
    before = first.values.get(w.STATE) or None
    _refuse_if_blocked(call, before, first.values.get(w.REASON))
    try:
        pasted = paste.deliver(server, first, data, time.monotonic() + ready)
    except paste.GoneWithText as error:
        raise TargetGone(f"pane {target.id} went away after the paste (it may have read the text)") from error
    except paste.PaneGone as error:
        raise TargetGone(f"pane {target.id} went away before the text was delivered") from error
    try:
        left, submitted = paste.submit(server, pasted, ready)
    except paste.PaneGone as error:
        raise DeliveredNoTurn(f"submitted to {target.id} but the pane went away — do not resend") from error
    except paste.EnterUnread as error:
        raise DeliveredNoTurn(
            f"submitted to {target.id} but it has not read the Enter within {ready}s — do not resend"
        ) from error
    state = left.values.get(w.STATE) or None
    if before not in (w.DONE, w.IDLE) or bound == 0:
        if not submitted:
            raise DeliveredNoTurn(_unproven(target.id, pasted.shown))
        return Outcome(target, before, state)
    if _turn(left.values) > _turn(first.values):
        return Outcome(target, before, state, started=True, turn=_turn(left.values))
    began = _wait_for_turn(server, target.id, _turn(first.values), bound)
    return Outcome(target, before, began.opt(w.STATE), started=True, turn=w.to_int(began.opt(w.TURN)))


def _why_no_turn(outcome: Outcome) -> str:
    """Why a send that succeeded names no turn: a script that reads ``%N TURN`` from stdout
    got nothing, and must not meet that silence first as ``wait-done``'s refusal."""
    pane = outcome.pane.id
    if outcome.started and outcome.state == w.ERROR:
        return f"its turn ended in error at once; roost read {pane} says why"
    if outcome.started:
        return "replies are not recorded (ROOST_RECORD_DIR is empty), so turns are not numbered"
    if outcome.before is None:
        from roost.faces.cli.roost.turns import WHO

        return f"nothing in {pane} reported a turn: {WHO}; roost screen {pane} shows what it did"
    if outcome.before in (w.DONE, w.IDLE):
        return f"the turn proof is off ({TURN_TIMEOUT} is 0)"
    return (
        f"{pane} was {outcome.before}, and a turn is named only for an agent whose badge read done "
        f"or idle; roost wait-done {pane} waits until it is no longer busy"
    )


def _named(outcome: Outcome, label: str) -> int | None:
    """The turn to name, keeping its sender beside it; None when there is nothing to name."""
    if not outcome.started or paths.record_path() is None or outcome.state == w.ERROR:
        return None
    from roost.pane.state import replies

    try:
        replies.keep_sender(outcome.pane.server_key, outcome.pane.id, outcome.turn, label)
    except OSError as error:  # the prompt is already running: say so, but do not fail the send
        sys.stderr.write(f"roost send: could not keep the sender of turn {outcome.turn}: {error}\n")
    return outcome.turn


def run(verb: str, args: list[str]) -> int:
    call = parse(args)
    server = Server.from_env()
    resolved = targets.resolve(server, call.target, (*w.PANE_OPTIONS, w.BUDGET, READY_TIMEOUT, TURN_TIMEOUT))
    target = _agent_pane(resolved.panes)
    if target.dead:
        raise TargetGone(
            f"pane {target.id} is dead: its program exited; roost screen {target.id} shows how it ended, "
            f"roost close {target.id} closes it"
        )
    if target.opt(w.STATE) == w.BLOCKED:
        from roost.pane.state import panestate

        panestate.clear_if_declined(server, target)
    _refuse_if_blocked(call, target.opt(w.STATE), target.opt(w.REASON))
    _refuse_if_over_budget(call, target.opt(w.BUDGET))
    here = server.current_pane()
    label = call.label or (f"pane:{here}" if here else "human")
    data = paste.encode(call.text)
    if not data:
        raise UsageError(USAGE)
    try:
        with paste.pane_lock(server, target.id):
            outcome = _deliver(server, call, target, data)
            turn = _named(outcome, label)
    except BaseException:
        paste.drop_buffer(server)
        raise
    if call.as_json:
        from roost.faces.cli.output import document

        document(
            "send",
            target=call.target,
            pane=target.id,
            turn=turn,
            started=outcome.started,
            state=outcome.state,
            sent_by=label if turn is not None else None,
        )
    elif turn is not None:
        sys.stdout.write(f"{target.id} {turn}\n")
    else:
        sys.stderr.write(
            f"roost send: submitted to {target.id}, with no turn to name: {_why_no_turn(outcome)}\n"
        )
    return 0
