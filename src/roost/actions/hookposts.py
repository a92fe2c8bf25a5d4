"""An agent's hook event posted over HTTP: what ``rosterd-hook`` does for it, done in the daemon.

Claude Code can run a hook as a POST to a URL instead of a program (``"type": "http"``), with
``$TMUX_PANE`` filled into a header. No process starts: the agent waits only for the daemon's
answer. What the daemon does with the event is what the command hook does, through the same
modules, so the two give the same badge, turn, kept reply, events-log line and claim:

1. the event is read through the harness's manifest (:mod:`roost.detect.hookevents`); one the
   hook would ignore changes nothing;
2. the poster is proven to be the agent of the pane it names, from the kernel's tables and never
   from anything it sent (:meth:`roost.detect.attest.Attestor.prove_post`); anything else is
   refused (:class:`~roost.errors.Forbidden`) before anything changes;
3. the pane is stamped (:mod:`roost.actions.hookstamp`), in a thread: tmux is a blocking call;
4. the claim (:mod:`roost.detect.hookclaims`) about the proven process goes to the live roster,
   or, for the gate's event, is held open until an answer (:mod:`roost.actions.holding`), which
   is rendered as the manifest's allow or deny JSON for the agent to read from the response.

Events of one pane apply in the order they arrived: each waits its turn on the pane's lock
(asyncio's locks wake waiters first come, first served). A held gate gives the lock back while
it waits, since the agent goes on sending (a reminder that the dialog is open) meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from roost.actions import holding, hookstamp
from roost.actions.door import Door
from roost.actions.waits import Awaiter, whole
from roost.agents import manifest
from roost.detect import hookclaims, procs
from roost.detect.attest import Attestor, Proof, Unproven
from roost.detect.hookevents import Heard, read
from roost.errors import Forbidden, TargetGone
from roost.roster import BadClaim, Claim, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.tmux.server import Server

ANCESTORS_KEPT = 16
"""Ancestors a claim carries, as the command hook's does."""


class HookPosts:
    """The daemon's side of HTTP hooks: one per daemon, keeping each pane's order."""

    def __init__(self, door: Door, attestor: Attestor) -> None:
        self.door = door
        self.attestor = attestor
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}
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
        gated = held is not None and event.name == held.event and event.tool not in held.skip_tools
        async with self._turn(pane_id):
            proof, (context, reason, name) = await asyncio.to_thread(
                self._proven_stamp, heard, server, pane_id, local, remote
            )
            claim = self._claim(heard, proof, reason, name)
            if claim is not None and not gated:
                self.door.live.apply(claim)
        if held is None or claim is None or not gated:
            return _context(event.name, context)
        offered = held.offered(payload)  # type: ignore[arg-type]
        ended = await holding.hold(self.door, claim, always=bool(offered), watch=watch)
        if ended.answer in ("allow", "allow_always", "reject"):
            async with self._turn(pane_id):
                await asyncio.to_thread(hookstamp.answered, server, pane_id)
        return held.decided(ended.answer, ended.reason, offered)

    def _proven_stamp(
        self, heard: Heard, server: Server, pane_id: str, local: object, remote: object
    ) -> tuple[Proof, tuple[str | None, str | None, str | None]]:
        """Prove the poster, then stamp its pane: one trip off the loop for both (tmux and /proc
        are blocking calls), and nothing stamped for a poster that is refused."""
        proof = self._prove(heard, pane_id, local, remote)
        return proof, hookstamp.stamp(heard, server, pane_id)

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

    @asynccontextmanager
    async def _turn(self, pane_id: str) -> AsyncIterator[None]:
        """Hold pane ``pane_id``'s lock; forget the lock once no one holds or waits for it."""
        lock = self._locks.setdefault(pane_id, asyncio.Lock())
        self._waiting[pane_id] = self._waiting.get(pane_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[pane_id] -= 1
            if not self._waiting[pane_id]:
                del self._waiting[pane_id], self._locks[pane_id]


def _context(event: str, context: str | None) -> dict | None:
    """An answer that adds ``context`` to the agent's, in the shape Claude Code reads a hook's."""
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
