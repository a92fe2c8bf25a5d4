"""The headless runner: starts, drives, suspends, resumes and rebuilds headless sessions.

A headless session is ``rosterd-holder → ACP adapter → harness``. The runner starts holders,
speaks ACP to them (:mod:`roost.runner.link`), and turns what they say into claims: the
identity it launched with as source ``launcher``, everything the stream says as source ``acp``.
The roster applies them like any other claims, so every face reads a headless session the way
it reads a terminal one.

The lifecycle rules, all of them here:

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
- **Daemon restart**: holders keep running; :meth:`Runner.rebuild` reconnects to each, claims
  the state its replay buffer ends in (as of when the holder saw it, so ``activity_at`` is the
  session's last activity, not the restart), and lets the adapter's unanswered requests arrive
  again.
  A holder that is slow to answer (a loaded machine, a stopped process) is not dead: while the
  process that listens on its socket lives, it is waited for, however long, and its turn goes on.
- **Reboot**: holders are gone and their sockets with the runtime directory; the runner's own
  files (:mod:`roost.runner.store`) bring each session back ``suspended``. Nothing is signalled:
  a process is ended only as the kernel identity (pid, start time, boot id) the runner recorded
  for it, never as a file names it (:func:`roost.detect.procs.signal_exactly`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import shlex
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from roost import paths
from roost.agents.mcpconfig import StdioServer
from roost.detect import procs
from roost.errors import AgentFailed, Conflict, RoostError, TargetGone, UsageError
from roost.roster import Claim, ProcessId, Record, records
from roost.roster.live import Live
from roost.roster.precedence import ACP, LAUNCHER
from roost.runner import holders, lock, store
from roost.runner import link as links
from roost.runner.link import Asked, Handshake, Link, LinkError, replayed
from roost.runner.settings import Runner as RunnerSection
from roost.runner.settings import Settings
from roost.runner.store import Entry
from roost.runner.traffic import Said, Traffic, current_option
from roost.state import words

log = logging.getLogger("rosterd")

CRASH_WINDOW = 300.0
"""A second crash within this many seconds of the first is not resumed."""
HOUR = 3600.0
STOP_TIMEOUT = 8.0
"""Seconds a stopping holder gets (it bounds its own steps to about 4 s) before it is killed."""
IDLE_CHECK = 1.0
"""How often idle sessions are looked for; a session is suspended at most this late."""
REPLAY_WAIT = 1.0
"""Seconds a rebuild waits for a live holder's replay before it waits on in the background."""
SLOW_WAIT = 10.0
"""Seconds an action on a session whose holder has not answered yet waits for it, then is refused."""
ALIVE_CHECK = 1.0
"""How often a holder that is being waited for is checked to still be the same process."""
SANDBOX = "IS_SANDBOX"
"""Claude Code as root refuses to start unless this is unset or ``1``; its ACP adapter then
fails every ``session/new``. The runner drops any other value from an adapter's environment."""


_BY_STATUS: dict[int, type[RoostError]] = {400: UsageError, 404: TargetGone, 409: Conflict, 502: AgentFailed}


def refused(status: int, code: str, message: str) -> RoostError:
    """A request the runner refuses or cannot carry out, as the failure of that status (the
    API answers with it, a CLI exits by it), with ``code``, a word a script can branch on."""
    return _BY_STATUS[status](message, code=code)


@dataclass
class Headless:
    """One headless session as the runner drives it now."""

    entry: Entry
    traffic: Traffic
    link: Link | None = None
    process: ProcessId | None = None
    started: holders.Started | None = None
    stopping: bool = False
    """Its holder is being stopped, or started: an exit then is not a crash to act on."""
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    last_active: float = 0.0
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    answered: asyncio.Event | None = None
    """Set once a holder the daemon found at its start has answered (or is known gone); None
    when there was nothing to wait for."""


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
        self._environ = dict(os.environ if environ is None else environ)
        self.sessions: dict[str, Headless] = {}
        self._idle: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._unattached: list[tuple[Headless, Handshake]] = []
        self._ready = asyncio.Event()

    # Reading.

    def owns(self, key: str) -> bool:
        return key in self.sessions

    def get(self, key: str) -> Headless:
        found = self.sessions.get(key)
        if found is None:
            raise refused(404, "not_headless", f"{key} is not a headless session of this node")
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
        await self._ready.wait()
        adapter = self.settings.adapters.get(harness)
        if not adapter:
            known = ", ".join(sorted(self.settings.adapters)) or "none"
            raise refused(400, "unknown_harness", f"no ACP adapter for harness {harness!r}; known: {known}")
        if not os.path.isdir(cwd):
            raise refused(400, "bad_cwd", f"{cwd} is not a folder on this node")
        if harness in self.settings.extensions and (why := self._extension_missing(harness)):
            # Started without it, the session would miss what only the integration reports.
            raise refused(
                409,
                "extension_missing",
                f"{harness}'s adapter has no claims or permission gate of its own ([harness.{harness}] "
                f"extension = true) and roost's integration that supplies them is not in place: {why}",
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
        h = await self._launch(entry, fresh=True)
        return self._record(h)

    async def spawn(self, parent_key: str, harness: str, cwd: str, **options: Any) -> Record:
        """A child of a headless session: ``parent_session_key`` set, the parent's policy kept
        unless the call names one."""
        parent = self.get(parent_key)
        options["policy"] = options.get("policy") or parent.entry.policy
        return await self.start(harness, cwd, parent=parent_key, **options)

    async def _launch(self, entry: Entry, *, fresh: bool, load: bool | None = None) -> Headless:
        """Start a holder for ``entry`` and open or ``load`` its ACP session (load: when not
        ``fresh``). ``fresh`` makes a new session key; a crash's resume is fresh and loads."""
        load = not fresh if load is None else load
        env = self._env(entry)
        program = self.settings.adapters[entry.harness][0]
        if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
            # The holder would start and then fail to run it, a 502 that reads like a crash.
            raise refused(
                409,
                "adapter_missing",
                f"{entry.harness}'s ACP adapter {program!r} is not installed (not on the daemon's PATH): "
                "run `rosterd setup` to install it",
            )
        holder_key = holders.new_key()
        try:
            started = await holders.start(
                holder_key,
                harness=entry.harness,
                cwd=entry.cwd,
                name=entry.name,
                policy=entry.policy,
                adapter=self.settings.adapters[entry.harness],
                env=env,
            )
        except (holders.HolderError, OSError) as error:
            raise refused(502, "holder_failed", f"the holder would not start: {error}") from None
        if fresh:
            entry.key = records.session_key(
                self.live.roster.node_id, started.process.pid, started.process.start_ticks
            )
        entry.holder, entry.suspended, entry.warning = holder_key, False, None
        h = self.sessions.get(entry.key) or Headless(entry, Traffic(recap=entry.recap))
        h.entry, h.started, h.process = entry, started, started.process
        h.stopping = True  # until the session is open: a failure here is the caller's to hear
        h.last_active = self._clock()
        h.exited = asyncio.Event()
        h.seq = 0
        self.sessions[entry.key] = h
        self._claim_identity(h, fresh=fresh)
        try:
            shaken = await links.handshake(paths.holder_socket(holder_key))
            if shaken.peer != started.process.pid:
                raise LinkError(f"another process (pid {shaken.peer}) answers on the holder's socket")
            _stamp(entry, started.process, shaken)
            self._claim(h, LAUNCHER, fields={"holder": _holder(h)})
            link = self._attach(h, shaken)
            await link.initialize()
            mismatch = lock.check(
                self.settings.folder / lock.FILE,
                entry.harness,
                self.settings.adapters[entry.harness],
                link.agent_info,
                self._clock(),
            )
            if mismatch:
                await self._abandon(h, fresh=fresh)
                raise refused(409, "adapter_version_changed", mismatch)
            if not load:
                opened = await link.open(entry.cwd, self.mcp)
                entry.session_id = link.session_id
            else:
                assert entry.session_id is not None
                opened = await link.load(entry.cwd, entry.session_id, self.mcp)
            await self._options(link, entry, opened, strict=not load)
            entry.current_model = _model(entry, opened)
        except LinkError as error:
            said = holders.last_words(holder_key)
            await self._abandon(h, fresh=fresh)
            message = f"{error}; the adapter said: {said}" if said else str(error)
            raise refused(502, "adapter_failed", message) from None
        h.stopping = False
        if not procs.alive(started.process):  # it ended as it opened: the watch saw it stopping
            self._spawn(self._exited(h, holder_key))
        h.last_active = entry.activity_at = self._clock()
        store.save(entry)
        mode, model = _mode(opened), entry.current_model
        self._say(
            h,
            Said(
                words.IDLE,
                "resumed" if load else "session_new",
                {
                    "session_id": entry.session_id,
                    **({"mode": mode} if mode else {}),
                    **({"model": model} if model else {}),
                },
                entry.activity_at,
            ),
        )
        return h

    async def _options(self, link: Link, entry: Entry, opened: dict[str, Any], *, strict: bool) -> None:
        """The model and effort asked for, through the config options the adapter offers. A new
        session whose adapter offers no such option is refused (``strict``); a loaded one keeps
        what its adapter kept when it offers none."""
        wanted = {"model": entry.model, "thought_level": entry.effort}
        for option in opened.get("configOptions") or []:
            value = wanted.get(option.get("category")) if isinstance(option, dict) else None
            if value and isinstance(option.get("id"), str):
                await link.set_option(option["id"], value)
                wanted[option["category"]] = None
        missing = [
            name for name, value in (("model", wanted["model"]), ("effort", wanted["thought_level"])) if value
        ]
        if missing:
            raise LinkError(f"the {entry.harness} adapter offers no {' or '.join(missing)} option")

    def _attach(self, h: Headless, shaken: Handshake) -> Link:
        link = Link(h.traffic, lambda said: self._said(h, said), h.entry.policy)
        link.attach(shaken)
        h.link = link
        assert h.process is not None
        holder_key = h.entry.holder
        holders.watch(h.process.pid, lambda: self._spawn(self._exited(h, holder_key)))
        return link

    def _env(self, entry: Entry) -> dict[str, str]:
        env = {**self._environ, paths.API_SOCKET_ENV: str(paths.api_socket())}
        if env.get(SANDBOX) not in (None, "1"):
            del env[SANDBOX]
        return {**env, **entry.env}

    # Driving.

    async def prompt(self, key: str, text: str) -> tuple[Record, int]:
        """Send a prompt; a suspended session is resumed first, in the same call. The record,
        and the number of the turn the prompt started, for :meth:`wait` to tell its reply by."""
        h = await self._ready_for(key)
        async with h.lock:
            if h.entry.suspended:
                await self._resume(h)
            if h.traffic.pending is not None:
                raise refused(409, "needs_attention", "the session waits on a permission: allow or deny it")
            if h.traffic.running:
                raise refused(409, "busy", "the session is mid-turn: wait for it to end, or cancel it")
            try:
                await self._live_link(h).prompt(text)
            except LinkError as error:
                raise refused(502, "adapter_failed", str(error)) from None
            h.last_active = self._clock()
            turn = h.traffic.turns
        return self._record(h), turn

    async def cancel(self, key: str) -> Record:
        h = await self._ready_for(key)
        if h.entry.suspended or not h.traffic.running:
            raise refused(409, "not_running", "no turn is running")
        try:
            await self._live_link(h).cancel()
        except LinkError as error:
            raise refused(502, "adapter_failed", str(error)) from None
        return self._record(h)

    def answer(self, key: str, *, allow: bool, always: bool = False, reason: str | None = None) -> Record:
        """Answer the pending permission with the adapter's own option for that choice."""
        h = self.get(key)
        pending = h.traffic.pending
        if pending is None or h.link is None:
            raise refused(409, "nothing_pending", "the session waits on no permission")
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
            raise refused(409, "no_such_option", f"the adapter offered no option to {wanted}")
        h.link.answer(chosen, reason)
        h.last_active = self._clock()
        return self._record(h)

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

    # Suspending, resuming, stopping.

    async def suspend(self, key: str, *, idle: bool = False) -> Record:
        h = await self._ready_for(key)
        async with h.lock:
            if h.entry.suspended:
                return self._record(h)
            if h.traffic.pending is not None and not (
                idle and self.settings.runner.suspend_on_needs_attention
            ):
                raise refused(409, "needs_attention", "a pending permission keeps the session live")
            if h.traffic.running and not idle:
                raise refused(409, "busy", "the session is mid-turn: cancel it first")
            await self._stop_holder(h)
            h.entry.suspended, h.entry.activity_at = True, self._clock()
            store.save(h.entry)
            self._claim(h, LAUNCHER, fields={"liveness": records.SUSPENDED, "holder": None})
            event = "idle_timeout" if idle else "suspended"
            self._say(h, Said(words.IDLE, event, {"session_id": h.entry.session_id}, h.entry.activity_at))
        return self._record(h)

    async def resume(self, key: str) -> Record:
        h = await self._ready_for(key)
        async with h.lock:
            if h.entry.suspended:
                await self._resume(h)
        return self._record(h)

    async def _resume(self, h: Headless) -> None:
        entry = h.entry
        if not entry.session_id:
            raise refused(409, "no_session_id", "the session has no stored id to load")
        now = self._clock()
        entry.resumes = [at for at in entry.resumes if now - at < HOUR]
        if len(entry.resumes) >= self.settings.runner.max_resumes_per_hour:
            resumed = _times(len(entry.resumes))
            entry.warning = f"{resumed} in the last hour (max_resumes_per_hour): stays suspended"
            entry.activity_at = now
            store.save(entry)
            self._say(h, Said(words.IDLE, "resume_limit", {"error_reason": entry.warning}, now))
            raise refused(409, "resume_limit", entry.warning)
        entry.resumes.append(now)
        await self._launch(entry, fresh=False)

    async def stop(self, key: str) -> None:
        """End the session: its holder and every process under it, then its record."""
        h = await self._ready_for(key)
        async with h.lock:
            if not h.entry.suspended:
                await self._stop_holder(h)
            self._end(h, "exit")

    async def _stop_holder(self, h: Headless) -> None:
        h.stopping = True
        link, h.link = h.link, None
        if link is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(link.conn.ext_method("roost/stop", {}), 2.0)
        try:
            await asyncio.wait_for(h.exited.wait(), STOP_TIMEOUT)
        except TimeoutError:
            target = procs.stamp(h.process) if h.process is not None else None
            if target is not None:
                procs.signal_exactly(target, signal.SIGKILL, group=True)
        if link is not None:
            await link.close()
        if h.entry.holder:
            holders.discard(h.entry.holder)
        h.entry.holder = None

    def _end(self, h: Headless, reason: str) -> None:
        self.sessions.pop(h.entry.key, None)
        store.forget(h.entry.key)
        self.live.apply(Claim(ACP, self._clock(), session_key=h.entry.key, ended=reason))

    async def _abandon(self, h: Headless, *, fresh: bool) -> None:
        """A start or resume that failed half way: its holder goes; a new session's record
        ends, a resumed one is suspended again."""
        await self._stop_holder(h)
        if not fresh:
            h.entry.suspended = True
            store.save(h.entry)
            self._claim(h, LAUNCHER, fields={"liveness": records.SUSPENDED, "holder": None})
            return
        self._end(h, "exit")

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
        _end_leftovers(h.entry)
        if holder_key:
            holders.discard(holder_key)
        if h.link is not None:
            await h.link.close()
            h.link = None
        entry = h.entry
        self._end(h, reason)
        if reason != "crash" or not self.settings.runner.resume_on_crash or not entry.session_id:
            return
        now = self._clock()
        if any(now - at < CRASH_WINDOW for at in entry.crashes):
            log.warning("headless session %s crashed twice within five minutes: not resumed", entry.key)
            return
        resumes = [at for at in entry.resumes if now - at < HOUR]
        if len(resumes) >= self.settings.runner.max_resumes_per_hour:
            log.warning("headless session %s crashed past max_resumes_per_hour: not resumed", entry.key)
            return
        again = replace(entry, key="", crashes=[now], resumes=[*resumes, now], holder=None, suspended=False)
        try:
            await self._launch(again, fresh=True, load=True)
        except RoostError as error:
            log.warning("headless session %s could not be resumed after its crash: %s", entry.key, error)
            return
        # The new session is the old one's continuation, under its own key; the session id is kept.
        new = self.sessions[again.key]
        said = Said(words.IDLE, "resumed_after_crash", {"session_id": entry.session_id}, again.activity_at)
        self._say(new, said)

    # Running: the SDK loaded and live holders attached, then the idle timer.

    def begin(self) -> None:
        """After :meth:`rebuild`, with the daemon serving: load the ACP SDK (most of a second,
        off the loop), hand each live holder's socket to it, and start the idle timer. An
        action that arrives first waits for this, not for a timeout."""
        self._spawn(self._connect())

    async def _connect(self) -> None:
        try:
            await asyncio.to_thread(importlib.import_module, "acp.client.connection")
            for h, shaken in self._unattached:
                self._attach(h, shaken).session_id = h.entry.session_id
                h.last_active = self._clock()
            self._unattached.clear()
        finally:
            self._ready.set()
            self._idle = asyncio.ensure_future(self._idle_loop())

    async def _ready_for(self, key: str) -> Headless:
        await self._ready.wait()
        h = self.get(key)
        if h.answered is not None and not h.answered.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(h.answered.wait(), SLOW_WAIT)
            if not h.answered.is_set():
                raise refused(
                    409,
                    "holder_slow",
                    "the session's holder has not answered since rosterd started; it is being "
                    "waited for: try again",
                )
        return self.get(key)

    async def _idle_loop(self) -> None:
        while True:
            await asyncio.sleep(IDLE_CHECK)
            now = self._clock()
            for h in list(self.sessions.values()):
                if (
                    h.entry.suspended
                    or h.stopping  # starting, resuming or stopping: not idle, whatever the clock says
                    or h.link is None
                    or h.lock.locked()
                    or (h.traffic.running and not h.traffic.pending)
                ):
                    continue
                if now - h.last_active < self.settings.runner.idle_timeout_s:
                    continue
                with contextlib.suppress(RoostError):
                    await self.suspend(h.entry.key, idle=True)

    # Rebuilding after a restart.

    async def rebuild(self) -> int:
        """Every session the runner kept, back in the roster: live ones from their holder's
        replay, slow ones as live while their holder is waited for, the rest as suspended.
        Returns how many sessions came back."""
        entries = store.load_all()
        shaken = await asyncio.gather(*(self._shake(entry) for entry in entries))
        for entry, result in zip(entries, shaken, strict=True):
            h = Headless(entry, Traffic(recap=entry.recap))
            self.sessions[entry.key] = h
            if isinstance(result, Handshake):
                self._restore_live(h, result)
            elif isinstance(result, Asked):
                self._restore_waiting(h, result)
            else:
                self._restore_suspended(h)
        return len(entries)

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
            _end_leftovers(entry)
            holders.discard(entry.holder)
        if not entry.suspended or entry.activity_at is None:
            entry.activity_at = self._clock()
        entry.holder, entry.suspended = None, True
        entry.holder_process = entry.adapter_process = None
        store.save(entry)
        h.process = _key_process(entry.key)
        self._claim_identity(h, fresh=True)
        self._say(h, Said(words.IDLE, "suspended", {"session_id": entry.session_id}, entry.activity_at))

    def _restore_live(self, h: Headless, shaken: Handshake) -> None:
        self._claim_holder(h, shaken.peer)
        self._replayed(h, shaken)

    def _claim_holder(self, h: Headless, pid: int) -> None:
        """The record's identity: the process its key was made from, then the holder that
        listens on its socket now (a resumed session's key names its first holder)."""
        first = _key_process(h.entry.key)
        current = procs.identity(pid) or first
        h.process = first
        self._claim_identity(h, fresh=True)
        if current != first:
            h.process = current
            self._claim_identity(h, fresh=False)

    def _replayed(self, h: Headless, shaken: Handshake) -> None:
        """Where the holder's replay leaves the session, claimed; its socket handed to the SDK
        once that is loaded (at once when it is already)."""
        _stamp(h.entry, procs.identity(shaken.peer), shaken)
        store.save(h.entry)
        self._claim(h, LAUNCHER, fields={"holder": _holder(h)})
        notifications = list(shaken.replay.get("notifications") or [])
        folded = _fold(replayed(h.traffic, notifications, shaken.replay.get("times")), h.entry.activity_at)
        folded.fields["session_id"] = h.entry.session_id
        if h.entry.current_model:
            folded.fields.setdefault("model", h.entry.current_model)
        self._say(h, folded)
        if self._ready.is_set():
            self._attach(h, shaken).session_id = h.entry.session_id
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
            if self.sessions.get(h.entry.key) is h:
                log.warning("the holder of headless session %s ended before it answered", h.entry.key)
                self._restore_suspended(h)
        else:
            if self.sessions.get(h.entry.key) is h:
                self._replayed(h, shaken)
            else:
                shaken.writer.close()
        finally:
            assert h.answered is not None
            h.answered.set()

    async def close(self) -> None:
        """The daemon is stopping: links close, holders keep running."""
        if self._idle is not None:
            self._idle.cancel()
        for h in self.sessions.values():
            if h.link is not None:
                await h.link.close()

    # Claims.

    def _claim_identity(self, h: Headless, *, fresh: bool) -> None:
        entry = h.entry
        fields: dict[str, Any] = {
            "harness": entry.harness,
            "cwd": entry.cwd,
            "lane": "headless",
            "permission_policy": entry.policy,
            "liveness": records.SUSPENDED if entry.suspended else records.LIVE,
            "holder": None if entry.suspended or not entry.holder else _holder(h),
        }
        if entry.name:
            fields["name"] = entry.name
        if entry.parent:
            fields["parent_session_key"] = entry.parent
        self._claim(
            h, LAUNCHER, fields=fields, process=h.process, started_at=entry.started_at if fresh else None
        )

    def _said(self, h: Headless, said: Said) -> None:
        h.last_active = self._clock()
        self._say(h, said)

    def _say(self, h: Headless, said: Said) -> None:
        h.seq += 1
        fields = dict(said.fields)
        if said.activity is None and not fields:
            return
        self._claim(h, ACP, activity=said.activity, event=said.event, fields=fields, seq=h.seq, at=said.at)

    def _claim(
        self,
        h: Headless,
        source: str,
        *,
        activity: str | None = None,
        event: str | None = None,
        fields: dict[str, Any] | None = None,
        process: ProcessId | None = None,
        started_at: float | None = None,
        seq: int | None = None,
        at: float | None = None,
    ) -> None:
        """Apply a claim of the runner's, received ``at`` when it happened (None: now)."""
        outcome = self.live.apply(
            Claim(
                source,
                self._clock() if at is None else at,
                session_key=h.entry.key,
                process=process,
                activity=activity,
                event=event,
                fields=fields or {},
                seq=seq,
                started_at=started_at,
            )
        )
        if not outcome.accepted:
            log.warning(
                "a %s claim for headless session %s was refused: %s", source, h.entry.key, outcome.reasons
            )

    def _record(self, h: Headless) -> Record:
        record = self.live.roster.record(h.entry.key)
        assert record is not None
        return record

    def _live_link(self, h: Headless) -> Link:
        if h.link is None:
            raise refused(409, "not_live", "the session has no holder right now")
        return h.link

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def settings_of(runner: RunnerSection, harness: dict[str, Any], folder: Path) -> Settings:
    """Settings from the daemon's config: its ``[runner]`` section and ``[harness.*]`` tables,
    and ``folder``, the one the config was read from."""
    adapters = {name: shlex.split(h.adapter) for name, h in harness.items() if h.adapter}
    extensions = frozenset(name for name, h in harness.items() if h.extension)
    return Settings(adapters, runner, folder, extensions)


def _fold(said: list[Said], since: float | None = None) -> Said:
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


def _times(count: int) -> str:
    """``resumed 1 time``, ``resumed 3 times``: the limit's refusal is read by people."""
    return f"resumed {count} time{'' if count == 1 else 's'}"


def _mode(opened: dict[str, Any]) -> str | None:
    modes = opened.get("modes")
    if isinstance(modes, dict) and isinstance(modes.get("currentModeId"), str):
        return modes["currentModeId"][:64]
    return None


def _model(entry: Entry, opened: dict[str, Any]) -> str | None:
    """The model the session runs: the one asked for (the adapter took it), else the one its
    config options say; None when it offers no model option."""
    offered = current_option(opened.get("configOptions"), "model")
    return (entry.model or offered) if offered else None


def _holder(h: Headless) -> dict[str, Any]:
    adapter = procs.Stamp.from_json(h.entry.adapter_process)
    return {
        "key": h.entry.holder,
        "pid": h.process.pid if h.process else None,
        "adapter_pid": adapter.pid if adapter else None,
        "socket": str(paths.holder_socket(h.entry.holder or "")),
    }


def _key_process(key: str) -> ProcessId:
    """The process a session key was made from: ``node:pid:ticks``."""
    _, pid, ticks = key.rsplit(":", 2)
    return ProcessId(int(pid), int(ticks))


def _stamp(entry: Entry, holder: ProcessId | None, shaken: Handshake) -> None:
    """Record the kernel identities of the holder and of its adapter. The adapter's pid comes
    from the holder's own answer, and counts only while the holder is that process's parent."""
    entry.holder_process = entry.adapter_process = None
    found = procs.stamp(holder) if holder is not None else None
    if holder is None or found is None:
        return
    entry.holder_process = found.to_json()
    state = shaken.replay.get("state")
    pid = state.get("adapter_pid") if isinstance(state, dict) else None
    if type(pid) is int and pid > 1 and procs.parent(pid) == holder.pid:
        adapter = procs.stamp(pid)
        entry.adapter_process = adapter.to_json() if adapter else None


def _end_leftovers(entry: Entry) -> None:
    """A holder that died without ending its tree leaves its adapter: end it and its children.

    Only the adapter the runner recorded (its pid, start time and boot all still the same) and
    only while it carries its holder's mark in its environment: after a reboot, or when the
    pid names anything else, nothing is signalled."""
    adapter = procs.Stamp.from_json(entry.adapter_process)
    if adapter is None or not entry.holder or not procs.alive(adapter.process):
        return
    if not procs.carries(adapter.pid, paths.HOLDER_MARK_ENV, entry.holder):
        return
    try:
        below = psutil.Process(adapter.pid).children(recursive=True)
    except psutil.Error:
        below = []
    tree = [adapter, *(found for proc in below if (found := procs.stamp(proc.pid)) is not None)]
    if procs.stamp(adapter.process) != adapter:  # it ended while its children were listed
        return
    for target in tree:
        procs.signal_exactly(target, signal.SIGKILL)
