"""A headless session's lifecycle: which holder keeps it, if any, and every change of that.

The rules, all of them here (``docs/architecture.md`` tables them beside a restart's):

- **Launched**: a new holder, then the ACP session opened (:mod:`roost.headless.runner.launch`). A launch
  that fails half way takes its holder with it: a new session's record ends, a resumed one is
  suspended again.
- **Idle** past ``idle_timeout_s`` (no turn running, nothing pending): the holder is stopped and
  the record stays ``suspended`` with its session id. A pending permission keeps the session
  live, because it cannot outlive its harness, unless ``suspend_on_needs_attention`` says so.
- **Addressed while suspended** (a prompt, ``resume``): a new holder, ``session/load`` of the
  stored id, then the prompt: one call that takes a little longer. No timer resumes anything.
- **Crash** (the holder or the adapter ended when nobody asked): the session ends ``crash``;
  with a stored id and ``resume_on_crash`` it is resumed once, in a new holder under a new key,
  unless it crashed already in the last five minutes. Resumes count per hour: past
  ``max_resumes_per_hour`` a session stays suspended (or, after a crash, is not resumed) and
  the record says why.
- **Stopped**: its holder and every process under it end, then its record.

A harness whose adapter cannot load a session back (``[acp] resumes = false``: a failed load
may cost the history) is never suspended, by the timer or on request, and is not resumed after
a crash or a reboot: a refusal (``cannot_resume``) says so, and the history stays the harness's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from roost.agents.mcpconfig import StdioServer
from roost.base.errors import AdapterFailed, Conflict, RoostError
from roost.headless.runner import holders, launch, lock, stamps, store
from roost.headless.runner.claims import Claims
from roost.headless.runner.headless import Headless
from roost.headless.runner.link import Handshake, Link, LinkError
from roost.headless.runner.settings import Settings
from roost.headless.runner.store import Entry
from roost.headless.runner.traffic import Said, Traffic
from roost.pane.state import words
from roost.truth.detect import procs

log = logging.getLogger("rosterd")

CRASH_WINDOW = 300.0
"""A second crash within this many seconds of the first is not resumed."""
HOUR = 3600.0
STOP_TIMEOUT = 8.0
"""Seconds a stopping holder gets (it bounds its own steps to about 4 s) before it is killed."""
IDLE_CHECK = 1.0
"""How often idle sessions are looked for; a session is suspended at most this late."""

Spawn = Callable[[Coroutine[Any, Any, Any]], None]
"""Runs work in the background, kept until it is done."""


class Lifecycle:
    """Launches, suspends, resumes, stops and ends the sessions of ``sessions``."""

    def __init__(
        self,
        settings: Settings,
        claims: Claims,
        sessions: dict[str, Headless],
        clock: Callable[[], float],
        environ: dict[str, str],
        mcp: Sequence[StdioServer],
        spawn: Spawn,
    ) -> None:
        self._settings = settings
        self._claims = claims
        self._sessions = sessions
        self._clock = clock
        self._environ = environ
        self._mcp = mcp
        """MCP servers every harness is offered in ``session/new`` and ``session/load``."""
        self._spawn = spawn

    # Launching.

    def check(self, entry: Entry) -> None:
        """What :meth:`launch` would refuse before it starts anything: an adapter not installed."""
        adapter = self._settings.adapters[entry.harness]
        launch.check_adapter(entry, adapter, launch.environment(self._environ, entry))

    async def launch(
        self, entry: Entry, *, fresh: bool, load: bool | None = None, fork_of: str | None = None
    ) -> Headless:
        """Start a holder for ``entry`` and open or ``load`` its ACP session (load: when not
        ``fresh``), or fork the session ``fork_of`` (its id) into it. ``fresh`` makes a new
        session key; a crash's resume is fresh and loads; a fork is fresh. An adapter that
        offers no ``session/fork`` refuses the fork (``cannot_fork``), its holder gone."""
        load = not fresh if load is None else load
        adapter = self._settings.adapters[entry.harness]
        started = launch.spawn_holder(entry, adapter, launch.environment(self._environ, entry))
        holder_key = started.key
        if fresh:
            entry.key = self._claims.session_key(started.process)
        entry.holder, entry.suspended, entry.warning = holder_key, False, None
        h = self._sessions.get(entry.key) or Headless(entry, Traffic(recap=entry.recap))
        h.entry, h.started, h.process = entry, started, started.process
        h.stopping = True  # until the session is open: a failure here is the caller's to hear
        h.last_active = self._clock()
        h.exited = asyncio.Event()
        h.seq = 0
        self._sessions[entry.key] = h
        self._claims.identity(h, fresh=fresh)  # before any wait: the scan may see its adapter already
        try:
            await launch.holder_ready(started)
        except AdapterFailed:
            h.exited.set()  # the holder has ended: ready() saw it exit or killed it
            await self._abandon(h, fresh=fresh)
            raise
        try:
            shaken = await launch.shake(started)
            stamps.stamp(entry, started.process, shaken)
            self._claims.holder(h)
            link = self.attach(h, shaken)
            await link.initialize()
            mismatch = lock.check(
                self._settings.folder / lock.FILE, entry.harness, adapter, link.agent_info, self._clock()
            )
            if mismatch:
                await self._abandon(h, fresh=fresh)
                raise Conflict(mismatch, code="adapter_version_changed")
            if fork_of is not None and not link.forks:
                await self._abandon(h, fresh=fresh)
                raise Conflict(cannot_fork(entry.harness, link.agent_info), code=CANNOT_FORK)
            opened = await launch.open_session(link, entry, self._mcp, load=load, fork_of=fork_of)
        except LinkError as error:
            failure = launch.failed(error, holder_key)  # before the holder's files go with it
            await self._abandon(h, fresh=fresh)
            raise failure from None
        h.stopping = False
        if not procs.alive(started.process):  # it ended as it opened: the watch saw it stopping
            self._spawn(self._exited(h, holder_key))
        h.last_active = entry.activity_at = self._clock()
        store.save(entry)
        mode, model = launch.mode(opened), entry.current_model
        self._claims.say(
            h,
            Said(
                words.IDLE,
                "session_forked" if fork_of is not None else "resumed" if load else "session_new",
                {
                    "session_id": entry.session_id,
                    **({"mode": mode} if mode else {}),
                    **({"model": model} if model else {}),
                },
                entry.activity_at,
            ),
        )
        return h

    def attach(self, h: Headless, shaken: Handshake) -> Link:
        """Hand the holder's socket to the ACP SDK, and watch the holder for its end."""
        link = Link(h.traffic, lambda said: self._claims.heard(h, said), h.entry.policy)
        link.attach(shaken)
        h.link = link
        assert h.process is not None
        holder_key = h.entry.holder
        holders.watch(h.process.pid, lambda: self._spawn(self._exited(h, holder_key)))
        return link

    # Suspending, resuming, stopping.

    async def suspend(self, h: Headless, *, idle: bool = False) -> None:
        """Stop the session's holder and keep its record, ``suspended``. A pending permission
        refuses it unless the idle timer asks (``idle``) and ``suspend_on_needs_attention``
        lets it; a running turn refuses it unless the idle timer asks."""
        async with h.lock:
            if h.entry.suspended:
                return
            if h.entry.harness in self._settings.unloadable:
                raise Conflict(_CANNOT_LOAD.format(h.entry.harness), code="cannot_resume")
            if h.traffic.pending is not None and not (
                idle and self._settings.runner.suspend_on_needs_attention
            ):
                raise Conflict("a pending permission keeps the session live", code="needs_attention")
            if h.traffic.running and not idle:
                raise Conflict("the session is mid-turn: cancel it first", code="busy")
            await self.stop_holder(h)
            h.entry.suspended, h.entry.activity_at = True, self._clock()
            store.save(h.entry)
            self._claims.suspended(h)
            event = "idle_timeout" if idle else "suspended"
            self._claims.say(
                h, Said(words.IDLE, event, {"session_id": h.entry.session_id}, h.entry.activity_at)
            )

    async def resume(self, h: Headless) -> None:
        """A suspended session on a new holder, its stored id loaded; the caller holds its lock."""
        entry = h.entry
        if entry.harness in self._settings.unloadable:
            raise Conflict(_CANNOT_RESUME.format(entry.harness), code="cannot_resume")
        if not entry.session_id:
            raise Conflict("the session has no stored id to load", code="no_session_id")
        if entry.handing_to:
            raise Conflict(
                f"the session is being handed off to {entry.handing_to}; if that handoff was cut "
                f"short, run `rosterd handoff {entry.key} --to {entry.handing_to}` again to settle it",
                code="handing_off",
            )
        now = self._clock()
        entry.resumes = [at for at in entry.resumes if now - at < HOUR]
        if len(entry.resumes) >= self._settings.runner.max_resumes_per_hour:
            resumed = _times(len(entry.resumes))
            entry.warning = f"{resumed} in the last hour (max_resumes_per_hour): stays suspended"
            entry.activity_at = now
            store.save(entry)
            self._claims.say(h, Said(words.IDLE, "resume_limit", {"error_reason": entry.warning}, now))
            raise Conflict(entry.warning, code="resume_limit")
        entry.resumes.append(now)
        await self.launch(entry, fresh=False)

    async def stop(self, h: Headless) -> None:
        """End the session: its holder and every process under it, then its record."""
        async with h.lock:
            if not h.entry.suspended:
                await self.stop_holder(h)
            self.end(h, "exit")

    async def stop_holder(self, h: Headless) -> None:
        """Ask the holder to stop (it ends its whole tree), and kill it if it does not in time."""
        h.stopping = True
        link, h.link = h.link, None
        if link is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(link.conn.ext_method("roost/stop", {}), 2.0)
        try:
            await asyncio.wait_for(h.exited.wait(), STOP_TIMEOUT)
        except TimeoutError:
            if h.process is not None:
                stamps.kill_holder(h.process)
        if link is not None:
            await link.close()
        if h.entry.holder:
            holders.discard(h.entry.holder)
        h.entry.holder = None

    def end(self, h: Headless, reason: str) -> None:
        """The session is over: out of the runner's table and files, its record ended."""
        self._sessions.pop(h.entry.key, None)
        store.forget(h.entry.key)
        self._claims.ended(h, reason)

    async def _abandon(self, h: Headless, *, fresh: bool) -> None:
        """A start or resume that failed half way: its holder goes; a new session's record
        ends, a resumed one is suspended again."""
        await self.stop_holder(h)
        if not fresh:
            h.entry.suspended = True
            store.save(h.entry)
            self._claims.suspended(h)
            return
        self.end(h, "exit")

    # Ending unasked.

    async def _exited(self, h: Headless, holder_key: str | None) -> None:
        """A holder ended. Asked to: nothing to do. Otherwise it crashed, or its adapter did."""
        if h.started is not None and h.started.key == holder_key:
            with contextlib.suppress(Exception):
                h.started.popen.wait(timeout=1)
        if h.stopping or holder_key != h.entry.holder:
            h.exited.set()
            return
        h.exited.set()
        state = holders.state(holder_key) if holder_key else None
        ended = (state or {}).get("ended") or {}
        reason = "exit" if isinstance(ended, dict) and ended.get("reason") == "exit" else "crash"
        stamps.end_leftovers(h.entry)
        if holder_key:
            holders.discard(holder_key)
        if h.link is not None:
            await h.link.close()
            h.link = None
        entry = h.entry
        self.end(h, reason)
        if reason != "crash" or not self._settings.runner.resume_on_crash or not entry.session_id:
            return
        if entry.harness in self._settings.unloadable:
            log.warning("headless session %s crashed; its adapter cannot load it back", entry.key)
            return
        now = self._clock()
        if any(now - at < CRASH_WINDOW for at in entry.crashes):
            log.warning("headless session %s crashed twice within five minutes: not resumed", entry.key)
            return
        resumes = [at for at in entry.resumes if now - at < HOUR]
        if len(resumes) >= self._settings.runner.max_resumes_per_hour:
            log.warning("headless session %s crashed past max_resumes_per_hour: not resumed", entry.key)
            return
        again = replace(entry, key="", crashes=[now], resumes=[*resumes, now], holder=None, suspended=False)
        try:
            new = await self.launch(again, fresh=True, load=True)
        except RoostError as error:
            log.warning("headless session %s could not be resumed after its crash: %s", entry.key, error)
            return
        # The new session is the old one's continuation, under its own key; the session id is kept.
        said = Said(words.IDLE, "resumed_after_crash", {"session_id": entry.session_id}, again.activity_at)
        self._claims.say(new, said)

    # The idle timer.

    async def idle_loop(self) -> None:
        """Suspend each session idle past ``idle_timeout_s``, for as long as the daemon runs."""
        while True:
            await asyncio.sleep(IDLE_CHECK)
            now = self._clock()
            for h in list(self._sessions.values()):
                if (
                    self._sessions.get(h.entry.key) is not h  # ended while another was suspended
                    or h.entry.suspended
                    or h.stopping  # starting, resuming or stopping: not idle, whatever the clock says
                    or h.link is None
                    or h.lock.locked()
                    or h.entry.harness in self._settings.unloadable
                    or (h.traffic.running and not h.traffic.pending)
                ):
                    continue
                if now - h.last_active < self._settings.runner.idle_timeout_s:
                    continue
                with contextlib.suppress(RoostError):
                    await self.suspend(h, idle=True)


CANNOT_FORK = "cannot_fork"
NO_CONVERSATION = "no_conversation"
"""The codes a fork is refused with (``docs/contracts.md``, "Forking a session")."""


def cannot_fork(harness: str, agent_info: dict[str, Any]) -> str:
    """The refusal of a fork whose adapter offers no ``session/fork``, naming the adapter."""
    said = " ".join(str(agent_info[key]) for key in ("name", "version") if agent_info.get(key))
    adapter = f"{harness}'s ACP adapter{f' ({said})' if said else ''}"
    return f"{adapter} offers no session/fork: a session of it cannot be forked"


_CANNOT_LOAD = (
    "{}'s adapter cannot load a session back (its manifest says [acp] resumes = false): "
    "the session stays live until it is stopped"
)
_CANNOT_RESUME = (
    "{}'s adapter cannot load a session back (its manifest says [acp] resumes = false): "
    "start a new session; this one's history stays in the harness's own files"
)


def _times(count: int) -> str:
    """``resumed 1 time``, ``resumed 3 times``: the limit's refusal is read by people."""
    return f"resumed {count} time{'' if count == 1 else 's'}"
