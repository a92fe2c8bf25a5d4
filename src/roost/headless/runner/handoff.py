"""The runner's part in a handoff: this node's end of moving a headless session between nodes.

On the owner, :meth:`Handoffs.hand_out` suspends the session and marks its file ``handing_to``
(no resume while the mark is there: the session could come alive on both nodes), then makes
its bundle (:mod:`roost.headless.runner.portable`); exactly one of :meth:`~Handoffs.handed_off` (the
target took it: it ends ``handed_off``) and :meth:`~Handoffs.kept` (it did not: the mark goes,
the session stays suspended and resumable, its record saying why) follows. On the target,
:meth:`Handoffs.take_in` checks a bundle, places its files and resumes the session under a new
key with the same session id. The steps between the two nodes are
:mod:`roost.actions.handoff`'s; where a harness keeps its transcript is its manifest's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roost.agents import manifest
from roost.base.errors import Conflict, UsageError
from roost.headless.runner import portable, store
from roost.headless.runner.claims import Claims
from roost.headless.runner.headless import Headless
from roost.headless.runner.lifecycle import Lifecycle
from roost.headless.runner.settings import Settings
from roost.headless.runner.traffic import Said
from roost.pane.state import words
from roost.truth.roster import Record
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER

log = logging.getLogger("rosterd")


def environ_of(environ: dict[str, str] | None) -> dict[str, str]:
    """The environment the runner gives its adapters: the daemon's own unless one is handed in."""
    return dict(os.environ if environ is None else environ)


def transcripts(harness: str) -> tuple[str, ...]:
    """Where ``harness`` keeps what ``session/load`` reads, as its manifest says."""
    found = manifest.load(harness)
    return found.acp.transcripts if found is not None and found.acp is not None else ()


class Handoffs:
    """Handing this node's sessions out, and taking other nodes' in."""

    def __init__(
        self,
        live: Live,
        settings: Settings,
        claims: Claims,
        lifecycle: Lifecycle,
        sessions: dict[str, Headless],
        clock: Callable[[], float],
        environ: dict[str, str],
    ) -> None:
        self._live = live
        self._settings = settings
        self._claims = claims
        self._lifecycle = lifecycle
        self._sessions = sessions
        self._clock = clock
        self._home = Path(environ.get("HOME") or os.path.expanduser("~"))
        """Where the harnesses keep their files: the home the adapters are started with."""
        self._handing: set[str] = set()
        """Keys a handoff is under way for, in this daemon: a second one is refused."""

    async def hand_out(self, h: Headless, node: str) -> dict[str, Any]:
        """The owner's first step: suspend the session (refused mid-turn or while a permission
        waits, as a suspend is), mark it as going to ``node``, and return its bundle."""
        key = h.entry.key
        if key in self._handing:
            raise Conflict(f"the session is being handed off to {h.entry.handing_to}", code="handing_off")
        patterns = transcripts(h.entry.harness)
        if not patterns:
            raise Conflict(
                f"{h.entry.harness}'s manifest names no transcript files ([acp] transcripts): its "
                "history could not travel, so it stays on this node",
                code="not_portable",
            )
        self._handing.add(key)
        again = h.entry.handing_to is not None  # an earlier handoff was cut short: its mark stays
        try:
            await self._lifecycle.suspend(h)
            async with h.lock:
                if not h.entry.suspended or not h.entry.session_id:
                    raise Conflict("the session has no stored id to load elsewhere", code="no_session_id")
                h.entry.handing_to = node
                store.save(h.entry)
                found = portable.collect(patterns, h.entry.session_id, self._home)
                return portable.bundle(h.entry, self._settings.adapters.get(h.entry.harness, []), found)
        except BaseException:
            self._handing.discard(key)
            if h.entry.handing_to is not None and not again:
                self.kept(h, None)
            raise

    def handed_off(self, h: Headless, to: dict[str, str]) -> Record:
        """The target took the session: it ends here ``handed_off``, its record saying where
        it went (``to``: ``node``, ``node_id``, ``session_key``)."""
        key = h.entry.key
        self._handing.discard(key)
        self._claims.claim(h, LAUNCHER, fields={"handed_to": to})
        self._lifecycle.end(h, "handed_off")
        record = self._live.roster.record(key)
        assert record is not None
        return record

    def kept(self, h: Headless, why: str | None) -> Record:
        """The handoff failed: the session stays here, suspended with its history, resumable,
        its record saying ``why``."""
        self._handing.discard(h.entry.key)
        h.entry.handing_to = None
        h.entry.activity_at = self._clock()
        store.save(h.entry)
        if why:
            said = Said(words.IDLE, "handoff_failed", {"error_reason": why}, h.entry.activity_at)
            self._claims.say(h, said)
        return self._claims.record(h)

    async def take_in(self, document: object, origin_node: str) -> Record:
        """The target's step: a bundle from ``origin_node`` checked, its files placed, and the
        session resumed here under a new key with the same session id. A bundle of a session
        this node already took from that key answers that session (the origin asking again
        after it was cut short); anything refused leaves nothing running here. The session is
        ``unconfirmed`` until :meth:`confirmed` (its answer went out) or :meth:`drop` (it did
        not); its file is written only once it is open (:meth:`Lifecycle.launch`), so a daemon
        killed before that brings nothing back, and one killed after it drops it at restart."""
        node = self._live.roster.node
        arrival = portable.read(document, self._clock())
        entry = arrival.entry
        if entry.harness not in self._settings.adapters:
            raise UsageError(f"{node} has no ACP adapter for {entry.harness}", code="unknown_harness")
        if entry.harness in self._settings.unloadable:
            raise Conflict(f"{entry.harness}'s adapter cannot load a session back here", code="cannot_resume")
        for h in list(self._sessions.values()):
            if h.entry.session_id == entry.session_id and h.entry.harness == entry.harness:
                if h.entry.arrived_from == arrival.origin:
                    return self._claims.record(h)
                raise Conflict(
                    f"{node} already has session {entry.session_id} ({h.entry.key})", code="session_here"
                )
        self._lifecycle.check(entry)
        written = portable.place(arrival, transcripts(entry.harness), self._home, node)
        entry.arrived_from, entry.suspended, entry.unconfirmed = arrival.origin, False, True
        try:
            h = await self._lifecycle.launch(entry, fresh=True, load=True)
        except BaseException:
            portable.unplace(written)  # refused: nothing of it stays on this node
            raise
        log.info("took in %s from %s as %s", arrival.origin, origin_node, entry.key)
        return self._claims.record(h)

    def confirmed(self, h: Headless) -> None:
        """The origin was sent this node's answer: the session is this node's to keep."""
        h.entry.unconfirmed = False
        store.save(h.entry)

    async def drop(self, h: Headless) -> None:
        """A session taken in whose origin never got the answer (it hung up, or this daemon
        died first): the origin kept its copy, so this one ends, its holder with it."""
        log.warning(
            "dropped %s, taken in from %s: the origin did not get the answer",
            h.entry.key,
            h.entry.arrived_from,
        )
        await self._lifecycle.stop(h)
