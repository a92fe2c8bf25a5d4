"""An agent's hook event posted over HTTP: what ``rosterd-hook`` does for it, done in the daemon.

Claude Code can run a hook as a POST to a URL instead of a program (``"type": "http"``), with
``$TMUX_PANE`` filled into a header. No process starts: the agent waits only for the daemon's
answer. What the daemon does with the event is what the command hook does, through the same
modules, so the two give the same badge, turn, kept reply, events-log line and claim:

1. the event is read through the harness's manifest (:mod:`roost.truth.detect.hookevents`); one the
   hook would ignore changes nothing;
2. the poster is proven to be the agent of the pane it names, from the kernel's tables and never
   from anything it sent (:meth:`roost.truth.detect.attest.Attestor.prove_post`); anything else is
   refused (:class:`~roost.base.errors.Forbidden`) before anything changes;
3. the pane is stamped (:mod:`roost.actions.hookstamp`), in a thread: tmux is a blocking call;
4. the claim (:mod:`roost.truth.detect.hookclaims`) about the proven process goes to the live roster,
   or, for the gate's event, is held open until an answer (:mod:`roost.actions.gates`), which
   is rendered as the manifest's allow or deny JSON for the agent to read from the response.

The agent is answered as soon as the poster is proven, when the answer cannot depend on the
rest: the stamp and the claim are applied after it, while the agent goes on. Claude waits for
every hook before it goes on, and its own cost of an HTTP hook is a few milliseconds (measured
in ``bench/claude_hooks.py``); the tmux round trip of the stamp was most of what the daemon
added to that. An event whose answer carries something (the context a session's start asks
for, a gate's decision) is answered after it is applied, as before.

Events of one pane apply in the order they arrived: each takes its place in the pane's line as
it arrives and applies once the one before it has, while its proof is made at once, beside
the line: an event is answered even while the stamp before it waits on tmux. A held gate
leaves the line while it waits, since the agent goes on sending (a reminder that the dialog is
open) meanwhile.
"""

from __future__ import annotations

import asyncio
import logging

from roost.actions import gates, hookstamp
from roost.actions.sessions import Door
from roost.actions.waits import Awaiter, whole
from roost.agents import manifest
from roost.base.errors import Forbidden, TargetGone
from roost.truth.detect import hookclaims, procs
from roost.truth.detect.attest import Attestor, Proof, Unproven
from roost.truth.detect.hookevents import Heard, read
from roost.truth.roster import BadClaim, Claim, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.pane.tmux.server import Server

log = logging.getLogger("rosterd")

Outcome = asyncio.Future[tuple[str | None, Claim | None]]
"""What a post is answered from: the context for the agent and the event's claim, or a refusal."""

ANCESTORS_KEPT = 16
"""Ancestors a claim carries, as the command hook's does."""


class HookPosts:
    """The daemon's side of HTTP hooks: one per daemon, keeping each pane's order."""

    def __init__(self, door: Door, attestor: Attestor) -> None:
        self.door = door
        self.attestor = attestor
        self._last: dict[str, asyncio.Future[None]] = {}
        """Each pane's last event in line: done once it has applied (or was refused)."""
        self._applying: set[asyncio.Task[None]] = set()
        self.counts = {"applied": 0, "refused": 0}
        """Events acted on and posts refused, since the daemon started (``GET /status``)."""

    async def post(
        self,
        harness: str,
        payload: object,
        pane_id: str,
        local: object,
        remote: object,
        watch: Awaiter = whole,
        *,
        gate: bool = False,
    ) -> dict | None:
        """Act on one posted event; the JSON object to answer with, or None for an empty answer
        (the agent goes on as if the hook said nothing). With ``gate`` (the gate's URL, which
        ``rosterd integrate install --gate`` installs for the manifest's ``[hook.gate] event``)
        that event's request is held open for an answer from anywhere. Forbidden when the poster is not the
        agent of ``pane_id``; TargetGone for a harness no manifest names, or when this daemon has
        no tmux server to stamp."""
        server = self.door.tmux
        if server is None:
            raise TargetGone("this daemon runs no tmux server")
        if manifest.load(harness) is None:
            raise TargetGone(f"no harness {harness!r}")
        heard = read(harness, payload) if isinstance(payload, dict) else None
        if heard is None or not heard.agent.hook.http:
            return None
        held = heard.agent.hook.gate if gate else None
        event = heard.event
        gated = held is not None and held.holds(event.name, event.tool)
        outcome: Outcome = asyncio.get_running_loop().create_future()
        line = self._line(pane_id)  # its place, taken as it arrives
        task = asyncio.create_task(self._apply(heard, server, pane_id, (local, remote), gated, outcome, line))
        self._applying.add(task)
        task.add_done_callback(self._applying.discard)
        context, claim = await asyncio.shield(outcome)
        if held is None or claim is None or not gated:
            return _context(event.name, context)
        offered = held.offered(payload)  # type: ignore[arg-type]
        ended = await gates.hold(self.door, claim, always=bool(offered), watch=watch)
        if ended.answer in ("allow", "allow_always", "reject"):
            before, mine = self._line(pane_id)
            try:
                await _after(before)
                await asyncio.to_thread(hookstamp.answered, server, pane_id)
            finally:
                mine.set_result(None)
        return held.decided(ended.answer, ended.reason, offered)

    async def _apply(
        self,
        heard: Heard,
        server: Server,
        pane_id: str,
        peer: tuple[object, object],
        gated: bool,
        outcome: Outcome,
        line: tuple[asyncio.Future[None] | None, asyncio.Future[None]],
    ) -> None:
        """Prove the poster; then, in the pane's ``line`` (the event before, this one), stamp
        its pane and apply (or, for a gated event, only build) its claim. ``outcome`` gets the
        context and claim, or the refusal; an empty answer as soon as the poster is proven, when
        the answer cannot depend on the rest."""
        early = not gated and not hookstamp.tells(heard)
        before, mine = line
        try:
            proof = await asyncio.to_thread(self._prove, heard, pane_id, *peer)
            if early:
                outcome.set_result((None, None))
            await _after(before)
            context, reason, name = await asyncio.to_thread(hookstamp.stamp, heard, server, pane_id)
            claim = self._claim(heard, proof, reason, name)
            if claim is not None and not gated:
                self.door.live.apply(claim)
            if not early:
                outcome.set_result((context, claim))
        except Exception as error:
            if outcome.done():  # answered already: the agent went on, the daemon says why
                log.warning("a %s hook event for pane %s failed: %s", heard.agent.name, pane_id, error)
            else:
                outcome.set_exception(error)
        finally:
            if not outcome.done():  # cancelled (the daemon stops): the answer fails too
                outcome.cancel()
            await _after(before)  # a refused event keeps its place: the next waits for the one before
            mine.set_result(None)

    def _prove(self, heard: Heard, pane_id: str, local: object, remote: object) -> Proof:
        try:
            proof = self.attestor.prove_post(pane_id, local, remote)
        except Unproven as why:
            self.counts["refused"] += 1
            raise Forbidden(f"refused: {why}") from None
        if proof.harness != heard.agent.name:
            self.counts["refused"] += 1
            raise Forbidden(f"refused: pane {pane_id}'s agent is {proof.harness}, not {heard.agent.name}")
        self.counts["applied"] += 1
        return proof

    def _claim(self, heard: Heard, proof: Proof, reason: str | None, name: str | None) -> Claim | None:
        """The event's claim about the proven process, parsed as ``POST /claim`` parses one."""
        process = proof.process
        chain = procs.ancestors(process.pid)[:ANCESTORS_KEPT]
        body = hookclaims.body(
            heard, [process.pid, process.start_ticks], [[p.pid, p.start_ticks] for p in chain], reason, name
        )
        if body is None:
            return None
        runner = self.door.runner
        if "recap" in body["fields"] and runner is not None and not runner.settings.runner.recap:
            del body["fields"]["recap"]  # [runner] recap = false: no turn's reply is kept
        try:
            return parse(body, self.door.clock())
        except BadClaim:
            return None  # what the claim schema refuses, the command hook's POST would lose too

    def _line(self, pane_id: str) -> tuple[asyncio.Future[None] | None, asyncio.Future[None]]:
        """A place at the end of pane ``pane_id``'s line: the future of the event before (None
        when there is none left) and this one's, which its holder sets once it has applied.
        A pane's line is forgotten once its last event has applied."""
        before = self._last.get(pane_id)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._last[pane_id] = mine

        def forget(done: asyncio.Future[None]) -> None:
            if self._last.get(pane_id) is done:
                del self._last[pane_id]

        mine.add_done_callback(forget)
        return before, mine


async def _after(before: asyncio.Future[None] | None) -> None:
    """Wait until the event before has applied; it is set only with a result, never cancelled
    by this waiter's own cancellation (shielded)."""
    if before is not None and not before.done():
        await asyncio.shield(before)


def _context(event: str, context: str | None) -> dict | None:
    """An answer that adds ``context`` to the agent's, in the shape Claude Code reads a hook's."""
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
