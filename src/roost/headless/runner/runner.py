"""The headless runner's door: every verb other packages call on a headless session.

A headless session is ``rosterd-holder → ACP adapter → harness``. The runner starts holders,
speaks ACP to them (:mod:`roost.headless.runner.link`), and turns what they say into claims
(:mod:`roost.headless.runner.claims`), so every face reads a headless session the way it reads a
terminal one. :class:`Runner` is what the daemon builds and what ``actions/`` and the faces
call: each verb checks the session's present state, refuses with a failure of
:mod:`roost.base.errors` and a ``code`` a script can branch on, and hands the rest to the part that
owns it:

- :mod:`roost.headless.runner.launch`: opening a session on a new holder;
- :mod:`roost.headless.runner.lifecycle`: suspending, resuming, stopping, a crash, the idle timer;
- :mod:`roost.headless.runner.rebuild`: the sessions a restart or a reboot left, back in the roster;
- :mod:`roost.headless.runner.stamps`: which processes may be signalled, and the signals;
- :mod:`roost.headless.runner.handoff`: handing a session to another node, and taking one in.

Forking a session (a new one that starts from its conversation, on a holder of its own) is here:
it is a start whose ``session/new`` is the adapter's ``session/fork``.

What stays here is driving a live session (a prompt, a cancel, an answer to a permission, a
wait for its turn) and the one wait every action shares: for the restart to be done with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.agents import manifest
from roost.agents.mcpconfig import StdioServer
from roost.base.errors import AdapterFailed, Conflict, TargetGone, UsageError
from roost.headless.runner import store
from roost.headless.runner.claims import Claims
from roost.headless.runner.handoff import Handoffs, environ_of, transcripts
from roost.headless.runner.headless import Headless
from roost.headless.runner.lifecycle import CANNOT_FORK, NO_CONVERSATION, Lifecycle, cannot_fork
from roost.headless.runner.link import Link, LinkError
from roost.headless.runner.rebuild import Rebuild
from roost.headless.runner.settings import RunnerSection, Settings
from roost.headless.runner.store import Entry
from roost.truth.roster import Record, records
from roost.truth.roster.live import Live

log = logging.getLogger("rosterd")

SLOW_WAIT = 10.0
"""Seconds an action on a session whose holder has not answered yet waits for it, then is refused."""
TRANSCRIPT_WAIT_S = 5.0
"""Seconds a fork waits for a turn's conversation to reach the harness's transcript file."""


@dataclass(frozen=True)
class Waited:
    """Where :meth:`Runner.wait` left a session."""

    record: Record | None
    reached: bool
    """The session got where the wait was for."""
    stale: bool
    """The record's recap is not the waited-for turn's: that turn had not ended. A reply is
    never served as fresher than it is."""


class Runner:
    """Every headless session of this node."""

    def __init__(
        self,
        live: Live,
        settings: Settings,
        clock: Callable[[], float] = time.time,
        environ: dict[str, str] | None = None,
        mcp: Sequence[StdioServer] = (),
        extension_missing: Callable[[str], str | None] = lambda harness: None,
    ) -> None:
        self.live = live
        self.settings = settings
        self.mcp = tuple(mcp)
        """MCP servers every harness is offered in ``session/new`` and ``session/load``."""
        self._extension_missing = extension_missing
        """Why roost's integration with a harness is not in place, or None: asked before a
        harness of ``settings.extensions`` starts (the daemon passes ``integrate.missing``;
        the runner cannot import its neighbour)."""
        self._clock = clock
        self.sessions: dict[str, Headless] = {}
        self._idle: asyncio.Task[None] | None = None
        self._closed = False
        self._background: set[asyncio.Task[Any]] = set()
        self._claims = Claims(live, clock)
        self._lifecycle = Lifecycle(
            settings,
            self._claims,
            self.sessions,
            clock,
            environ_of(environ),
            self.mcp,
            self._spawn,
        )
        self._handoffs = Handoffs(
            live, settings, self._claims, self._lifecycle, self.sessions, clock, environ_of(environ)
        )
        self._rebuild = Rebuild(self._lifecycle, self._claims, self.sessions, clock, self._spawn)
        self._home = Path(environ_of(environ).get("HOME") or os.path.expanduser("~"))
        """Where the harnesses keep their conversations: the home the adapters are started with."""

    # Reading.

    def owns(self, key: str) -> bool:
        return key in self.sessions

    def get(self, key: str) -> Headless:
        found = self.sessions.get(key)
        if found is None:
            raise TargetGone(f"{key} is not a headless session of this node", code="not_headless")
        return found

    # Starting.

    async def start(
        self,
        harness: str,
        cwd: str,
        *,
        name: str | None = None,
        policy: str | None = None,
        model: str | None = None,
        effort: str | None = None,
        env: dict[str, str] | None = None,
        parent: str | None = None,
    ) -> Record:
        """A new headless session: a holder, ``initialize``, ``session/new``, the record."""
        await self._rebuild.ready.wait()
        adapter = self.settings.adapters.get(harness)
        if not adapter:
            known = ", ".join(sorted(self.settings.adapters)) or "none"
            raise UsageError(
                f"no ACP adapter for harness {harness!r}; known: {known}", code="unknown_harness"
            )
        if not os.path.isdir(cwd):
            raise UsageError(f"{cwd} is not a folder on this node", code="bad_cwd")
        if harness in self.settings.extensions and (why := self._extension_missing(harness)):
            # Started without it, the session would miss what only the integration reports.
            raise Conflict(
                f"{harness}'s adapter has no claims or permission gate of its own ([harness.{harness}] "
                f"extension = true) and roost's integration that supplies them is not in place: {why}",
                code="extension_missing",
            )
        entry = Entry(
            key="",
            harness=harness,
            cwd=os.path.abspath(cwd),
            started_at=self._clock(),
            policy=policy or self.settings.runner.default_permission_policy,
            recap=self.settings.runner.recap,
            name=name,
            parent=parent,
            model=model,
            effort=effort,
            env=dict(env or {}),
        )
        h = await self._lifecycle.launch(entry, fresh=True)
        return self._claims.record(h)

    async def spawn(self, parent_key: str, harness: str, cwd: str, **options: Any) -> Record:
        """A child of a headless session: ``parent_session_key`` set, the parent's policy kept
        unless the call names one."""
        parent = self.get(parent_key)
        options["policy"] = options.get("policy") or parent.entry.policy
        return await self.start(harness, cwd, parent=parent_key, **options)

    async def forkable(self, key: str) -> Headless:
        """The session ``key``, once it is known that a fork of it can start: it has a
        conversation (a session id, and where its manifest names the harness's transcript
        files, one of them), and its adapter, when it has said so, offers ``session/fork``.
        Conflict ``no_conversation`` or ``cannot_fork`` otherwise, before anything starts."""
        h = await self._ready_for(key)
        entry = h.entry
        if not entry.session_id or not await self._conversed(key, entry.harness, entry.session_id):
            raise Conflict(
                f"{key} has no conversation yet: fork it once it has had a turn", code=NO_CONVERSATION
            )
        if h.link is not None and h.link.forks is False:
            raise Conflict(cannot_fork(entry.harness, h.link.agent_info), code=CANNOT_FORK)
        return h

    async def _conversed(self, key: str, harness: str, session_id: str) -> bool:
        """Whether the harness has written the conversation: at once when it has, and when the
        session has ended a turn but its file is not there yet (the CLI writes it as the turn
        ends, and a loaded machine may take a moment), once it is, within
        :data:`TRANSCRIPT_WAIT_S`."""
        patterns = transcripts(harness)
        record = self.live.roster.record(key)
        turned = record is not None and (record.completed_revision or 0) > 0
        deadline = time.monotonic() + (TRANSCRIPT_WAIT_S if turned else 0.0)
        while not _conversed(patterns, session_id, self._home):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.1)
        return True

    async def fork(
        self,
        key: str,
        cwd: str,
        *,
        name: str | None = None,
        policy: str | None = None,
        parent: str | None = None,
    ) -> Record:
        """A new headless session in ``cwd`` that starts from ``key``'s conversation: a holder
        of its own, ``initialize``, ``session/fork``. It runs as ``key`` was started (harness,
        policy unless ``policy`` names one, model, effort, environment); ``key`` is left as it
        was, running or suspended. The refusals of :meth:`forkable`, and ``bad_cwd``."""
        source = (await self.forkable(key)).entry
        if not os.path.isdir(cwd):
            raise UsageError(f"{cwd} is not a folder on this node", code="bad_cwd")
        entry = Entry(
            key="",
            harness=source.harness,
            cwd=os.path.abspath(cwd),
            started_at=self._clock(),
            policy=policy or source.policy,
            recap=self.settings.runner.recap,
            name=name,
            parent=parent,
            model=source.model,
            effort=source.effort,
            env=dict(source.env),
        )
        h = await self._lifecycle.launch(entry, fresh=True, fork_of=source.session_id)
        return self._claims.record(h)

    # Driving.

    async def prompt(self, key: str, text: str) -> tuple[Record, int]:
        """Send a prompt; a suspended session is resumed first, in the same call. The record,
        and the number of the turn the prompt started, for :meth:`wait` to tell its reply by."""
        h = await self._ready_for(key)
        async with h.lock:
            if h.entry.suspended:
                await self._lifecycle.resume(h)
            if h.traffic.pending is not None:
                raise Conflict("the session waits on a permission: allow or deny it", code="needs_attention")
            if h.traffic.running:
                raise Conflict("the session is mid-turn: wait for it to end, or cancel it", code="busy")
            try:
                await _live_link(h).prompt(text)
            except LinkError as error:
                raise AdapterFailed(str(error), code="adapter_failed") from None
            h.last_active = self._clock()
            turn = h.traffic.turns
        return self._claims.record(h), turn

    async def cancel(self, key: str) -> Record:
        h = await self._ready_for(key)
        if h.entry.suspended or not h.traffic.running:
            raise Conflict("no turn is running", code="not_running")
        try:
            await _live_link(h).cancel()
        except LinkError as error:
            raise AdapterFailed(str(error), code="adapter_failed") from None
        return self._claims.record(h)

    def answer(self, key: str, *, allow: bool, always: bool = False, reason: str | None = None) -> Record:
        """Answer the pending permission with the adapter's own option for that choice."""
        h = self.get(key)
        pending = h.traffic.pending
        if pending is None or h.link is None:
            raise Conflict("the session waits on no permission", code="nothing_pending")
        kinds = (
            (("allow_always",) if always else ("allow_once", "allow_always"))
            if allow
            else ("reject_once", "reject_always")
        )
        chosen = next(
            (o["id"] for kind in kinds for o in pending["options"] if o.get("kind") == kind and o.get("id")),
            None,
        )
        if chosen is None and allow:
            wanted = "always allow" if always else "allow"
            raise Conflict(f"the adapter offered no option to {wanted}", code="no_such_option")
        h.link.answer(chosen, reason)
        h.last_active = self._clock()
        return self._claims.record(h)

    def rename(self, key: str, label: str | None) -> None:
        """Keep a new display name for the session's next holder (the roster has it already)."""
        h = self.get(key)
        h.entry.name = label
        store.save(h.entry)

    async def wait(self, key: str, until: str, timeout: float, turn: int) -> Waited:
        """Wait until the session is ``idle`` (its turn ended), ``needs_attention`` or
        ``ended``: the record then, whether that is what was waited for, and whether its recap
        is stale, not turn ``turn``'s (that turn had not ended). A wait for idle stops early
        when the session comes to wait on a person instead: nobody's script should sleep out
        its timeout on a question it could answer."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        turned = self.sessions.get(key)  # kept: a session that ends leaves the runner's table

        def waited(record: Record | None, reached: bool) -> Waited:
            return Waited(record, reached, turned is None or turned.traffic.ended != turn)

        with self.live.subscribe(replay=False, own=True) as stream:
            while True:
                record = self.live.roster.record(key)
                h = self.sessions.get(key)
                if record is None or record.liveness == records.ENDED:
                    return waited(record, until == records.ENDED)
                if record.activity == records.NEEDS_ATTENTION:
                    return waited(record, until == records.NEEDS_ATTENTION)
                if (
                    until == records.IDLE
                    and record.activity == records.IDLE
                    and not (h and h.traffic.running)
                ):
                    return waited(record, True)
                left = deadline - loop.time()
                if left <= 0 or await stream.next(min(left, 1.0)) is None:
                    return waited(record, False)

    # Suspending, resuming, stopping (:mod:`roost.headless.runner.lifecycle`).

    async def suspend(self, key: str, *, idle: bool = False) -> Record:
        h = await self._ready_for(key)
        await self._lifecycle.suspend(h, idle=idle)
        return self._claims.record(h)

    async def resume(self, key: str) -> Record:
        h = await self._ready_for(key)
        async with h.lock:
            if h.entry.suspended:
                await self._lifecycle.resume(h)
        return self._claims.record(h)

    async def stop(self, key: str) -> None:
        """End the session: its holder and every process under it, then its record."""
        await self._lifecycle.stop(await self._ready_for(key))

    # Handing off (:mod:`roost.headless.runner.handoff`; the steps between nodes are
    # :mod:`roost.actions.handoff`'s).

    async def hand_out(self, key: str, node: str) -> dict[str, Any]:
        """Suspend the session, mark it as going to ``node`` and return its bundle."""
        return await self._handoffs.hand_out(await self._ready_for(key), node)

    def handed_off(self, key: str, to: dict[str, str]) -> Record:
        """The target took it: it ends here ``handed_off``, saying where it went."""
        return self._handoffs.handed_off(self.get(key), to)

    def kept(self, key: str, why: str | None) -> Record:
        """The handoff failed: it stays here, suspended and resumable, saying ``why``."""
        return self._handoffs.kept(self.get(key), why)

    async def take_in(self, document: object, origin_node: str) -> Record:
        """A bundle another node sent, checked, placed and resumed here under a new key."""
        await self._rebuild.ready.wait()
        return await self._handoffs.take_in(document, origin_node)

    async def confirmed(self, key: str) -> None:
        """A taken-in session's answer went out to its origin: it is this node's to keep (a
        coroutine, so the answer's background task runs it on the loop, not in a thread)."""
        if (h := self.sessions.get(key)) is not None:
            self._handoffs.confirmed(h)

    async def drop(self, key: str) -> None:
        """A taken-in session whose origin did not get the answer ends here."""
        await self._handoffs.drop(self.get(key))

    # Restarting (:mod:`roost.headless.runner.rebuild`).

    async def rebuild(self) -> int:
        """Every session the runner kept, back in the roster: live ones from their holder's
        replay, slow ones as live while their holder is waited for, the rest as suspended.
        Returns how many sessions came back."""
        return await self._rebuild.run()

    def begin(self) -> None:
        """After :meth:`rebuild`, with the daemon serving: load the ACP SDK (most of a second,
        off the loop), hand each live holder's socket to it, and start the idle timer. An
        action that arrives first waits for this, not for a timeout."""
        self._spawn(self._connect())

    async def _connect(self) -> None:
        try:
            await self._rebuild.connect()
            for h in [h for h in self.sessions.values() if h.entry.unconfirmed]:
                await self._handoffs.drop(h)  # taken in, and this daemon died before answering
        finally:
            if not self._closed:  # a daemon stopped while it was connecting starts no idle loop
                self._idle = asyncio.ensure_future(self._lifecycle.idle_loop())

    async def _ready_for(self, key: str) -> Headless:
        """The session, once the restart is done with it: the SDK loaded, and its holder (when
        the daemon found it at its start) answered. A holder still silent after ``SLOW_WAIT``
        is refused ``holder_slow``: it is waited for on, the caller tries again."""
        await self._rebuild.ready.wait()
        h = self.get(key)
        if h.answered is not None and not h.answered.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(h.answered.wait(), SLOW_WAIT)
            if not h.answered.is_set():
                raise Conflict(
                    "the session's holder has not answered since rosterd started; it is being "
                    "waited for: try again",
                    code="holder_slow",
                )
        return self.get(key)

    async def close(self) -> None:
        """The daemon is stopping: links close, holders keep running."""
        self._closed = True
        if self._idle is not None:
            self._idle.cancel()
        for h in self.sessions.values():
            if h.link is not None:
                await h.link.close()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_said_if_failed)


def settings_of(runner: RunnerSection, harness: dict[str, Any], folder: Path) -> Settings:
    """Settings from the daemon's config: its ``[runner]`` section and ``[harness.*]`` tables,
    and ``folder``, the one the config was read from."""
    adapters = {name: shlex.split(h.adapter) for name, h in harness.items() if h.adapter}
    extensions = frozenset(name for name, h in harness.items() if h.extension)
    unloadable = frozenset(
        name for name in harness if (found := manifest.load(name)) and found.acp and not found.acp.resumes
    )
    return Settings(adapters, runner, folder, extensions, unloadable)


def _conversed(patterns: tuple[str, ...], session_id: str, home: Path) -> bool:
    """Whether the harness has written the conversation ``session_id`` under ``home``, where
    ``patterns`` (its manifest's ``[acp] transcripts``) say it keeps one; with none named,
    the adapter is left to say."""
    import glob

    found = (
        glob.glob(pattern.replace("{session_id}", glob.escape(session_id)), root_dir=home, recursive=True)
        for pattern in patterns
    )
    return not patterns or any(found)


def _said_if_failed(task: asyncio.Task[Any]) -> None:
    """One line for background work that failed: unretrieved, asyncio would print the whole
    traceback into the daemon's log when the task is collected, at no time anyone chose."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.warning("headless: background work failed: %s", type(error).__name__)


def _live_link(h: Headless) -> Link:
    if h.link is None:
        raise Conflict("the session has no holder right now", code="not_live")
    return h.link
