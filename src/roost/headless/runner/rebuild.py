"""After a daemon restart or a reboot: every session the runner kept, back in the roster.

- **Daemon restart**: holders keep running. Each holder's replay is read and the state it ends
  in claimed (as of when the holder saw it, so ``activity_at`` is the session's last activity,
  not the restart), before the ACP SDK (most of a second to import) is loaded; then each
  socket is handed to the SDK and the adapter's unanswered requests arrive again.
- **A slow holder** (a loaded machine, a stopped process) is not dead: while the process that
  listens on its socket is the same one, its replay is waited for, however long, and its turn
  goes on. Only a holder that is gone is treated as gone: the session comes back suspended.
- **Reboot**: holders are gone with the runtime directory; the runner's own files
  (:mod:`roost.headless.runner.store`) bring each session back ``suspended``. Nothing is signalled but
  what :mod:`roost.headless.runner.stamps` can still name.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable

from roost.base import paths
from roost.headless.runner import holders, stamps, store
from roost.headless.runner import link as links
from roost.headless.runner.claims import Claims
from roost.headless.runner.headless import Headless
from roost.headless.runner.lifecycle import Lifecycle, Spawn
from roost.headless.runner.link import Asked, Handshake, LinkError, replayed
from roost.headless.runner.store import Entry
from roost.headless.runner.traffic import Said, Traffic
from roost.pane.state import words
from roost.truth.detect import procs

log = logging.getLogger("rosterd")

REPLAY_WAIT = 1.0
"""Seconds a rebuild waits for a live holder's replay before it waits on in the background."""
ALIVE_CHECK = 1.0
"""How often a holder that is being waited for is checked to still be the same process."""
SDK = "acp.client.connection"
"""The ACP SDK's client side, the module an attached holder's socket is handed to."""


class Rebuild:
    """Brings the runner's kept sessions back into ``sessions`` and the roster, then hands
    their holders to the ACP SDK; ``ready`` is set once it has."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        claims: Claims,
        sessions: dict[str, Headless],
        clock: Callable[[], float],
        spawn: Spawn,
    ) -> None:
        self._lifecycle = lifecycle
        self._claims = claims
        self._sessions = sessions
        self._clock = clock
        self._spawn = spawn
        self.ready = asyncio.Event()
        """Set once the SDK is loaded and every live holder found so far is attached to it."""
        self._unattached: list[tuple[Headless, Handshake]] = []

    async def run(self) -> int:
        """Every session the runner kept, back in the roster: live ones from their holder's
        replay, slow ones as live while their holder is waited for, the rest as suspended.
        Returns how many sessions came back."""
        entries = store.load_all()
        shaken = await asyncio.gather(*(self._shake(entry) for entry in entries))
        for entry, result in zip(entries, shaken, strict=True):
            h = Headless(entry, Traffic(recap=entry.recap))
            self._sessions[entry.key] = h
            if isinstance(result, Handshake):
                self._restore_live(h, result)
            elif isinstance(result, Asked):
                self._restore_waiting(h, result)
            else:
                self._restore_suspended(h)
        return len(entries)

    async def connect(self) -> None:
        """Load the ACP SDK (off the loop) and hand each live holder's socket to it; ``ready``
        is set after, even when that failed, so no action waits for it forever."""
        try:
            try:
                await asyncio.to_thread(importlib.import_module, SDK)
            except Exception as error:
                # Python's import locks can fail an import on one thread that meets a cycle
                # the loop is importing at that moment (a half-initialised module); the loop,
                # importing alone, meets none.
                log.warning(
                    "headless: the ACP SDK failed to load off the loop (%s); loading it on the loop",
                    type(error).__name__,
                )
                importlib.import_module(SDK)
            for h, shaken in self._unattached:
                self._lifecycle.attach(h, shaken).session_id = h.entry.session_id
                h.last_active = self._clock()
            self._unattached.clear()
        finally:
            self.ready.set()

    async def _shake(self, entry: Entry) -> Handshake | Asked | None:
        """The holder's replay; the connection still waiting for it when the holder is slow;
        None when no holder of this session listens any more."""
        if not entry.holder or entry.suspended:
            return None
        try:
            asked = await links.ask(paths.holder_socket(entry.holder), REPLAY_WAIT)
        except LinkError:
            return None
        known = procs.Stamp.from_json(entry.holder_process)
        listening = procs.stamp(asked.peer)
        if listening is None or (known is not None and known != listening):
            asked.writer.close()  # not the holder this session had: nothing of it is trusted
            return None
        try:
            return await links.replay(asked, REPLAY_WAIT)
        except TimeoutError:
            return asked
        except LinkError:
            return None

    def _restore_suspended(self, h: Headless) -> None:
        """A session with no holder, back suspended: as of its suspension when it was
        suspended already, else (its holder gone while no daemon watched) as of now."""
        entry = h.entry
        if entry.holder:
            stamps.end_leftovers(entry)
            holders.discard(entry.holder)
        if not entry.suspended or entry.activity_at is None:
            entry.activity_at = self._clock()
        entry.holder, entry.suspended = None, True
        entry.holder_process = entry.adapter_process = None
        store.save(entry)
        h.process = stamps.key_process(entry.key)
        self._claims.identity(h, fresh=True)
        self._claims.say(
            h, Said(words.IDLE, "suspended", {"session_id": entry.session_id}, entry.activity_at)
        )

    def _restore_live(self, h: Headless, shaken: Handshake) -> None:
        self._claim_holder(h, shaken.peer)
        self._replayed(h, shaken)

    def _claim_holder(self, h: Headless, pid: int) -> None:
        """The record's identity: the process its key was made from, then the holder that
        listens on its socket now (a resumed session's key names its first holder)."""
        first = stamps.key_process(h.entry.key)
        current = procs.identity(pid) or first
        h.process = first
        self._claims.identity(h, fresh=True)
        if current != first:
            h.process = current
            self._claims.identity(h, fresh=False)

    def _replayed(self, h: Headless, shaken: Handshake) -> None:
        """Where the holder's replay leaves the session, claimed; its socket handed to the SDK
        once that is loaded (at once when it is already)."""
        stamps.stamp(h.entry, procs.identity(shaken.peer), shaken)
        store.save(h.entry)
        self._claims.holder(h)
        notifications = list(shaken.replay.get("notifications") or [])
        folded = fold(replayed(h.traffic, notifications, shaken.replay.get("times")), h.entry.activity_at)
        folded.fields["session_id"] = h.entry.session_id
        if h.entry.current_model:
            folded.fields.setdefault("model", h.entry.current_model)
        self._claims.say(h, folded)
        if self.ready.is_set():
            self._lifecycle.attach(h, shaken).session_id = h.entry.session_id
            h.last_active = self._clock()
        else:
            self._unattached.append((h, shaken))

    def _restore_waiting(self, h: Headless, asked: Asked) -> None:
        """A holder that accepted the connection but has not answered yet: live, and waited for."""
        self._claim_holder(h, asked.peer)
        h.answered = asyncio.Event()
        self._spawn(self._wait_for_holder(h, asked))

    async def _wait_for_holder(self, h: Headless, asked: Asked) -> None:
        """Wait for a slow holder's replay for as long as the process that listens on its
        socket is the same one; only a holder that is gone is treated as gone."""
        holder = procs.stamp(asked.peer)
        reading = asyncio.ensure_future(links.replay(asked, None))
        try:
            while holder is not None and procs.alive(holder.process):
                done, _ = await asyncio.wait({reading}, timeout=ALIVE_CHECK)
                if done:
                    break
            if not reading.done():
                reading.cancel()
                asked.writer.close()
                raise LinkError("the holder is gone")
            shaken = reading.result()
        except LinkError:
            if self._sessions.get(h.entry.key) is h:
                log.warning("the holder of headless session %s ended before it answered", h.entry.key)
                self._restore_suspended(h)
        else:
            if self._sessions.get(h.entry.key) is h:
                self._replayed(h, shaken)
            else:
                shaken.writer.close()
        finally:
            assert h.answered is not None
            h.answered.set()


def fold(said: list[Said], since: float | None = None) -> Said:
    """Many steps of a replay as the one claim of where they ended, at the time of the last
    step that said an activity (``since``, the runner's own last word, when none did)."""
    activity, event, fields, at = words.IDLE, "rebuilt", {}, since
    for step in said:
        if step.activity is not None:
            activity, event, at = step.activity, step.event, step.at
        fields.update(step.fields)
    if activity == words.IDLE and event == "rebuilt":
        fields.pop("error_reason", None)
    return Said(activity, event, fields, at)
