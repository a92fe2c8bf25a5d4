"""Permission requests held open by a harness's gate, waiting for an answer from anywhere.

A gate is a hook that a harness runs before it asks the person (Claude Code's
``PermissionRequest``) and that may decide for them. ``rosterd-hook --gate`` posts the request
to the daemon and waits; the daemon publishes it as the session's pending request and holds it
here until one of these happens, whichever is first:

- someone answers it (the API, the CLI, MCP, the web app): the answer becomes the hook's
  decision, and the harness runs or refuses the tool;
- the person answers the dialog in the terminal: the harness ends the hook, its request to the
  daemon hangs up, and the hold is dropped;
- the session moves on without it (the roster shows another request, or no wait at all);
- ``gate_timeout_s`` passes: the hook exits without deciding and the dialog, drawn all along,
  is the person's to answer.

Only the last three are silent: a gate never decides on its own, so a Roost that is down or
slow leaves the agent exactly as it would be without one. One hold per session: a new request
of the same session withdraws the one before it.

:func:`hold` is what the API's ``POST /gate`` calls, once it has read the hook's claim: the
claim is applied with the request rosterd gives it (its id, ``answerable``, the answers on
offer), so every face sees one request it can answer (:mod:`roost.actions.permission`); the hold
then lasts until an answer, the session moving on, the harness's ``gate_timeout_s``, or the
caller hanging up (the harness ended its hook: the person answered the dialog). A hold that ends
without an answer leaves the request shown as one only the terminal can answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field

from roost.actions.sessions import Door
from roost.actions.waits import Awaiter, whole
from roost.base.errors import TargetGone
from roost.truth.roster import Claim, Record, pending, records
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import HOOK


@dataclass(frozen=True)
class Decision:
    """What the hook is told: one of :data:`roost.truth.roster.pending.ANSWERS`, and a reason for a
    rejection."""

    answer: str
    reason: str | None = None


@dataclass(eq=False)
class Hold:
    """One request a gate holds open: the session, the request's id, whether "always" is on
    offer, and the future its decision arrives on."""

    key: str
    request_id: str
    always: bool
    decided: asyncio.Future[Decision | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def settle(self, decision: Decision | None) -> bool:
        """Give the hook its decision (None: none, fall back to the dialog); False when it has one."""
        if self.decided.done():
            return False
        self.decided.set_result(decision)
        return True


class Gates:
    """Every request held open on this node, at most one per session."""

    def __init__(self) -> None:
        self._held: dict[str, Hold] = {}

    def hold(self, key: str, request_id: str, *, always: bool) -> Hold:
        """Hold a new request of ``key``; one it held before is withdrawn."""
        earlier = self._held.get(key)
        if earlier is not None:
            earlier.settle(None)
        made = Hold(key, request_id, always)
        self._held[key] = made
        return made

    def holding(self, key: str) -> Hold | None:
        """The request ``key``'s gate holds open now, if any."""
        found = self._held.get(key)
        return found if found is not None and not found.decided.done() else None

    def release(self, hold: Hold) -> None:
        """The hold is over (decided, hung up, withdrawn, timed out): forget it."""
        hold.settle(None)
        if self._held.get(hold.key) is hold:
            del self._held[hold.key]

    def __len__(self) -> int:
        return sum(1 for hold in self._held.values() if not hold.decided.done())


WAKE = 1.0

"""Seconds between looks at the roster while a gate waits with nothing announced."""

NAMES = {pending.ALLOW: "Allow", pending.ALLOW_ALWAYS: "Always allow", pending.REJECT: "Deny"}

"""A gated request's answers as a person reads them."""


@dataclass(frozen=True)
class Held:
    """How a hold ended: the answer for the hook (None: none, the dialog decides), a rejection's
    reason, and the request's id (None when the gate never held it: a source above the hook
    speaks for the session)."""

    answer: str | None
    reason: str | None
    request_id: str | None


async def hold(door: Door, claim: Claim, *, always: bool, watch: Awaiter = whole) -> Held:
    """Claim the wait ``claim`` (a hook's, with its pending request) says, hold its request open,
    and give the decision. ``always``: the harness offers to always allow this request."""
    permissions = door.permissions
    if permissions is None:
        raise TargetGone("this daemon answers no permissions")
    live = door.live
    request_id = pending.new_id()
    asked = claim.fields["pending"]
    held = {**asked, "id": request_id, "answerable": True, "options": _options(always)}
    outcome = live.apply(dataclasses.replace(claim, fields={**claim.fields, "pending": held}))
    key = outcome.session_key
    record = live.roster.record(key) if key else None
    if key is None or record is None or not _ours(record, request_id):
        return Held(None, None, None)
    holding = permissions.gates.hold(key, request_id, always=always)
    try:
        decision = await watch(_decided(live, key, holding, permissions.gate_timeout(record.harness)))
    finally:
        permissions.gates.release(holding)
    if decision is None:
        _let_go(live, key, request_id, door.clock())
        return Held(None, None, request_id)
    return Held(decision.answer, decision.reason, request_id)


def _options(always: bool) -> list[dict[str, str]]:
    """The answers a gated request offers, in ACP's kinds so every client reads one list."""
    offered = [answer for answer in pending.ANSWERS if always or answer != pending.ALLOW_ALWAYS]
    return [{"id": a, "name": NAMES[a], "kind": pending.KINDS_OF_ANSWER[a][0]} for a in offered]


def _ours(record: Record, request_id: str) -> bool:
    """Whether the record still waits on this very request."""
    open_now = record.pending or {}
    return (
        record.liveness != records.ENDED
        and record.activity == records.NEEDS_ATTENTION
        and open_now.get("id") == request_id
    )


async def _decided(live: Live, key: str, hold: Hold, timeout: float) -> Decision | None:
    """The decision, or None when the session moved on or the time ran out."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    with live.subscribe(replay=False, own=True) as stream:
        while not hold.decided.done():
            record = live.roster.record(key)
            left = deadline - loop.time()
            if record is None or not _ours(record, hold.request_id) or left <= 0:
                return None
            told = asyncio.ensure_future(stream.next(min(left, WAKE)))
            await asyncio.wait({told, hold.decided}, return_when=asyncio.FIRST_COMPLETED)
            told.cancel()
            if told.done() and told.result() is None:  # the daemon is stopping
                return None
        return hold.decided.result()


def _let_go(live: Live, key: str, request_id: str, now: float) -> None:
    """The gate gave up on the request: if the session still shows it, say it can no longer
    be answered from here (the dialog in the terminal still can)."""
    record = live.roster.record(key)
    if record is None or not _ours(record, request_id):
        return
    shown = {**(record.pending or {}), "answerable": False, "options": []}
    live.apply(
        Claim(
            HOOK,
            now,
            session_key=key,
            activity=records.NEEDS_ATTENTION,
            event=record.activity_event,
            fields={"pending": shown},
        )
    )
