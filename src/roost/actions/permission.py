"""Answering a session's pending permission: one contract for a headless session and a pane.

Whoever answers (the API, ``rosterd allow``/``deny``, MCP, the web app) reads the pending
request from the record and answers it with ``allow``, ``allow_always`` or ``reject``. The
answer is fenced like a prompt: it may pin the request's ``id``, the ``status_epoch`` and the
``occupant_id`` it read, and it is refused (409, nothing changes) when what it pinned no longer
holds. Each refusal has a code a script can branch on:

======================  ==========================================================================
code                    why nothing was answered
======================  ==========================================================================
status_epoch_changed    the daemon restarted since the caller read the record
occupant_changed        another process occupies the session now
session_ended           the session is over
nothing_pending         no request is open: it was answered already, or the session moved on
request_changed         another request is open now than the one the answer names
answer_in_terminal      the request can only be answered where it is shown (a harness with no
                        gate, a gate turned off, which the refusal names the command for, or a
                        gate that let go of it): open the terminal
no_such_option          the harness did not offer that answer (``allow_always`` where it has none)
======================  ==========================================================================

How it reaches the agent depends on the lane: a headless session's adapter gets the answer to
its ``session/request_permission`` with its own option id (:mod:`roost.headless.runner.runner`); a
gated pane's hook gets it as its decision (:mod:`roost.actions.gates`). The answer is then
claimed at once, so every client sees the request closed without waiting on the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.actions.gates import Decision, Gates
from roost.base.errors import Conflict, TargetGone
from roost.services import integrate
from roost.truth.roster import Claim, Record, records
from roost.truth.roster.live import Live
from roost.truth.roster.pending import ALLOW, ALLOW_ALWAYS, ANSWERS, REJECT
from roost.truth.roster.precedence import HOOK

if TYPE_CHECKING:
    from roost.actions.sessions import Door, Found
    from roost.headless.runner.runner import Runner

GATE_TIMEOUT = 3600.0
"""Seconds a gate holds a request when its harness's ``gate_timeout_s`` is not configured."""
ANSWERED = "permission_answered"
"""The activity event of a session whose request was answered from rosterd."""

__all__ = [
    "ALLOW",
    "ALLOW_ALWAYS",
    "ANSWERED",
    "ANSWERS",
    "REJECT",
    "Answer",
    "Permissions",
    "answer",
    "gates",
]


@dataclass(frozen=True)
class Answer:
    """One answer, what it pins, and who gave it from where (for the journal, never the agent)."""

    option: str
    reason: str | None = None
    request_id: str | None = None
    status_epoch: int | None = None
    occupant_id: int | None = None
    by: str = "unknown"
    via: str = "api"
    through: str | None = None
    """The node of the swarm the answer came through (its name), None for one given here."""


Answered = Callable[[Record, Answer], None]
"""Told of every answer that reached an agent (the journal keeps who answered, from where)."""


class Permissions:
    """Answers pending requests of this node's sessions, whichever lane they are in."""

    def __init__(
        self,
        live: Live,
        gates: Gates,
        clock: Callable[[], float],
        runner: Runner | None = None,
        answered: Answered | None = None,
        gate_timeouts: Mapping[str, float] | None = None,
    ) -> None:
        self.live = live
        self.gates = gates
        self.runner = runner
        self._clock = clock
        self._answered = answered
        self._gate_timeouts = dict(gate_timeouts or {})

    def offered_gates(self) -> dict[str, str | None]:
        """Each harness that offers a gate: None where it is on here, else the command that
        turns it on (read anew: a person may have run it a moment ago)."""
        return integrate.gates()

    def gate_timeout(self, harness: str | None) -> float:
        """Seconds a gate of ``harness`` holds a request before the dialog is the person's alone."""
        return self._gate_timeouts.get(harness or "", GATE_TIMEOUT)

    def answer(self, key: str, given: Answer) -> Record:
        """Answer ``key``'s pending request; the record after. Raises the refusals above."""
        record = self._fenced(key, given)
        pending = record.pending or {}
        if not pending.get("answerable"):
            raise _terminal(record, self._why_terminal(record))
        if self.runner is not None and self.runner.owns(key):
            after = self.runner.answer(
                key, allow=given.option != REJECT, always=given.option == ALLOW_ALWAYS, reason=given.reason
            )
        else:
            after = self._through_gate(record, given)
        if self._answered is not None:
            self._answered(after, given)
        return after

    def _why_terminal(self, record: Record) -> str:
        """Why only the terminal can answer ``record``'s request, in the person's words."""
        agent = record.harness or "this agent"
        gates = self.offered_gates()
        if record.harness not in gates:
            return f"{agent} asks in its terminal and offers rosterd no gate"
        turn_on = gates[record.harness]
        if turn_on is not None:
            return f"{agent}'s gate is off (`{turn_on}` turns it on)"
        return "its gate let go of the request"

    def _fenced(self, key: str, given: Answer) -> Record:
        roster = self.live.roster
        record = roster.record(key)
        if record is None:
            raise TargetGone(f"no session {key!r}")
        if given.status_epoch is not None and given.status_epoch != roster.status_epoch:
            raise Conflict("the daemon restarted since the record was read", code="status_epoch_changed")
        if given.occupant_id is not None and given.occupant_id != record.occupant_id:
            raise Conflict("another process occupies the session now", code="occupant_changed")
        if record.liveness == records.ENDED:
            raise Conflict("the session has ended", code="session_ended")
        pending = record.pending
        if pending is None or record.activity != records.NEEDS_ATTENTION:
            raise Conflict(
                "nothing is pending: the request was answered already, or the session moved on",
                code="nothing_pending",
            )
        if given.request_id is not None and given.request_id != pending.get("id"):
            raise Conflict(
                "another request is pending now: read it, then answer that one",
                code="request_changed",
                request_id=pending.get("id"),
            )
        return record

    def _through_gate(self, record: Record, given: Answer) -> Record:
        key = record.session_key
        pending = record.pending or {}
        hold = self.gates.holding(key)
        if hold is None or hold.request_id != pending.get("id"):
            raise _terminal(record, "its gate let go of the request")
        if given.option == ALLOW_ALWAYS and not hold.always:
            raise Conflict(
                f"{record.harness or 'the agent'} offered no way to always allow this", code="no_such_option"
            )
        hold.settle(Decision(given.option, given.reason))
        self.gates.release(hold)
        self.live.apply(Claim(HOOK, self._clock(), session_key=key, activity=records.ACTIVE, event=ANSWERED))
        after = self.live.roster.record(key)
        assert after is not None
        return after


def answer(door: Door, target: str | Found, given: Answer) -> Record:
    """Answer the pending request of the session ``target`` names, whichever its lane; the
    record after. Raises the refusals above, and TargetGone for no such session."""
    key = door.session(target).session_key
    if door.permissions is None:
        raise Conflict("this daemon answers no permissions", code="answer_in_terminal")
    return door.permissions.answer(key, given)


def gates(door: Door) -> dict[str, str | None]:
    """Each harness whose permission requests this node could answer through a gate: None
    where that gate is on, else the command that turns it on; none where the daemon answers no
    permissions (no gate would help)."""
    return {} if door.permissions is None else door.permissions.offered_gates()


def _terminal(record: Record, why: str) -> Conflict:
    """The refusal that sends the person to the terminal, saying which one and why."""
    pane = (record.tmux or {}).get("pane")
    where = f" (pane {pane})" if pane else ""
    return Conflict(f"answer it in the terminal{where}: {why}", code="answer_in_terminal", pane=pane)
