"""Screen detection in the running daemon: a pane that wrote something is read once and judged.

Detection's third tier (an agent with no hooks, or a session that predates the install) must
follow a screen within a second without polling panes. The tmux watcher says when a pane
wrote (coalesced per pane); this module then captures that pane with one tmux call, runs the
screen engine with the pane's agent (its ``@roost-harness``, else the roster record's
harness, else whichever agent the screen identifies as), and applies the claim, source
``screen``, through :class:`~roost.truth.roster.live.Live` like every other claim. The roster's
precedence keeps a hook's word over the screen's.

Boundaries, as sentences:
- The watcher's callback only triggers a per-pane job; capture and detection never run in it.
- One capture per pane at a time: output during a capture reruns it once, never stacks it.
- Every pane is read once when the watcher reports it (start-up, a new pane) and after tmux
  dropped some of its output (``resync``).
- A claim is applied only when what the screen shows changed for that pane's session.
- A hook's blocked whose dialog has left the screen ends (:mod:`roost.truth.roster.attention` says
  when): the roster takes the screen's word over it, and the pane's badge is cleared as the
  CLI clears a declined dialog, off the event loop.
- A higher source's word that a settled reading's rule overrules (``overrules``: a hook's done
  over a failed turn's error) ends (:mod:`roost.truth.roster.overrules`): the roster takes the
  reading in its place, and the pane's badge says it, off the event loop. A session that comes
  to show such a word is read again at once, as one whose hook says it waits on a person.
- A closed pane's session ends as the scan ends it: when its process is gone.
- Every notice but output (a pane, window or session came, went, moved or was renamed) bumps
  the :class:`~roost.pane.tmux.topology.Topology` that web pages follow for their terminal list.
- While roost's tmux server is down (or has no session) the watcher holds no clients; it is
  asked to reconcile when the server's socket file appears or changes (looked at every
  ``NOTICE`` seconds, a stat, no tmux call), at each look for ``FRESH`` seconds after that,
  and at least every ``REVIVE`` seconds; not at all while it watches a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from dataclasses import dataclass
from typing import Any

from roost.pane.state import panestate, words
from roost.pane.tmux.pacing import Rerun
from roost.pane.tmux.server import SEP, THEN, Server
from roost.pane.tmux.topology import Topology
from roost.pane.tmux.watch import Change, Watcher
from roost.truth.detect import procs
from roost.truth.detect import screenrules as engine
from roost.truth.detect.manifests import AgentRules, load_catalog
from roost.truth.detect.regions import Screen
from roost.truth.detect.scanclaims import INTERACTIVE, ended
from roost.truth.roster import Claim, ProcessId, overrules, records
from roost.truth.roster.attention import DIALOG_CLOSED, Dialogs
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import SCREEN
from roost.truth.roster.times import Clock

log = logging.getLogger("rosterd")

REVIVE = 5.0
"""Seconds between reconcile attempts while roost's tmux server is not running."""
NOTICE = 0.2
"""Seconds between looks at the tmux socket file while the server is not running."""
FRESH = 2.0
"""Seconds after a new socket file appears during which every look also asks tmux: the
server's first session may not be there at the first look."""
SETTLE = 0.4
"""Seconds a screen must keep reading idle or done, after reading busy, before it is claimed.

Between a dialog closing and the agent's spinner starting, a screen can look finished for a
frame or two; claiming that would badge a working agent idle (and notify "done"). Busy states
are claimed at once: a false "working" costs nothing a moment later corrects."""
_FIELDS = (
    "#{pane_pid}",
    "#{pane_dead}",
    "#{" + words.HARNESS + "}",
    "#{pane_title}",
    "#{pane_tty}",
    "#{session_name}",
    "#{window_id}",
    "#{window_index}",
    "#{window_name}",
    "#{start_time}-#{pid}",
)
INFO = SEP.join(_FIELDS)
_READ = ("output", "pane-added", "pane-moved")
FOLLOW_TIMEOUT = 60.0
"""Seconds the roster follower sleeps on a quiet stream before looking again."""


@dataclass(frozen=True)
class Capture:
    """One read of one pane: who runs in it and what its screen shows."""

    pane: str
    pid: int
    harness: str | None
    tty: str | None
    tmux: dict[str, Any]
    screen: Screen


def parse(pane: str, socket: str, out: bytes) -> Capture | None:
    """A capture from the output of ``display-message -p INFO ; capture-pane -p -e``; None for
    a dead pane or output that is not that."""
    head, _, body = out.decode(errors="replace").partition("\n")
    fields = head.split(SEP)
    if len(fields) != len(_FIELDS) or fields[1] == "1" or not fields[0].isdigit():
        return None
    pid, _, harness, title, tty, session, window, index, name, key = fields
    tmux = {
        "socket": socket,
        "server": key or None,
        "session": session,
        "window": window,
        "window_index": int(index) if index.isdigit() else None,
        "window_name": name,
        "pane": pane,
    }
    return Capture(
        pane, int(pid), harness or None, tty or None, tmux, Screen.parse(body, title=title or None)
    )


class Screens:
    """Watches roost's tmux server and turns pane screens into ``screen`` claims."""

    def __init__(
        self,
        server: Server,
        live: Live,
        clock: Clock,
        *,
        interval: float = 0.05,
        topology: Topology | None = None,
    ) -> None:
        self.server = server
        self.live = live
        self.topology = topology
        self._clock = clock
        self._watcher = Watcher(server, self._on_change, interval=interval)
        self._jobs: dict[str, Rerun] = {}
        self._shown: dict[str, tuple[ProcessId, engine.Detection]] = {}
        self._quiet_since: dict[str, float] = {}
        self._dialogs = Dialogs()
        self._gone = asyncio.Event()
        self._revive: asyncio.Task[None] | None = None
        self._asked: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Screens:
        await self._watcher.start()
        if not self._watching():
            self._gone.set()
        self._revive = asyncio.create_task(self._keep_watching())
        self._asked = asyncio.create_task(self._look_when_asked())
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in (self._revive, self._asked):
            if task is None:
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for job in self._jobs.values():
            job.cancel()
        self._jobs.clear()
        await self._watcher.close()

    def _on_change(self, change: Change) -> None:
        pane = change.pane
        if change.kind != "output" and self.topology is not None:
            self.topology.bump()
        if change.kind in _READ and pane is not None:
            job = self._jobs.get(pane)
            if job is None:
                job = self._jobs[pane] = Rerun(lambda: self._read(pane))
                self._dialogs.watch(pane, self._clock())
            job.trigger()
        elif change.kind == "pane-closed" and pane is not None:
            self._forget(pane)
            self._end_gone(pane)
        elif change.kind == "server-gone":
            for gone in list(self._jobs):
                self._forget(gone)
            self._gone.set()

    async def _look_when_asked(self) -> None:
        """Read a pane again when a hook says its agent waits on a person, or says a state a
        screen rule of its agent overrules (a hook's done, where a failed turn ends so too).

        Both rules are judged on readings, and a reading follows output; a word can come
        with none (a reminder of a dialog answered while the screen sat still at the prompt,
        a turn's end after its error was drawn), so the word itself asks for one look, as
        output would.
        """
        with self.live.subscribe(replay=False, own=True) as stream:
            while (batch := await stream.next(FOLLOW_TIMEOUT)) is not None:
                for change in batch:
                    record = change.record
                    where = (record.tmux or {}) if record is not None else {}
                    if (
                        record is None
                        or where.get("socket") != self.server.socket
                        or where.get("pane") not in self._jobs
                        or not (record.activity == records.NEEDS_ATTENTION or self._overruled(record))
                        or self.live.roster.holder(record.session_key) == SCREEN
                    ):
                        continue
                    self._jobs[where["pane"]].trigger()

    @staticmethod
    def _overruled(record: records.Record) -> bool:
        """Whether ``record`` shows a state a screen rule of its agent overrules."""
        if record.activity != records.IDLE or record.harness is None:
            return False  # the words rules overrule end a turn; a busy record is not asked about
        rules = load_catalog().agents.get(record.harness)
        return rules is not None and record.state in rules.overruled

    def _forget(self, pane: str) -> None:
        job = self._jobs.pop(pane, None)
        if job is not None:
            job.cancel()
        self._shown.pop(pane, None)
        self._quiet_since.pop(pane, None)
        self._dialogs.forget(pane)

    def _end_gone(self, pane: str) -> None:
        """End the closed pane's session if its process is gone, as the scan would on its next pass."""
        record = self._record(pane)
        if record is not None:
            self.live.apply_all(ended([record], self._clock()))

    def _watching(self) -> bool:
        """Whether the watcher holds a client: a server with no session yet sends it nothing."""
        return self._watcher.server_running and bool(self._watcher.clients)

    async def _keep_watching(self) -> None:
        """Bring the watcher back after the server went away (or before it first started).

        A new socket file is a server starting, and its first session comes a moment later: a
        look in that moment finds no server yet, or one with no session to attach to. Waiting
        ``REVIVE`` for the next look left the first session's panes unwatched for five
        seconds (a split or a rename unseen by every page), so a new socket is looked at every
        ``NOTICE`` for ``FRESH`` seconds."""
        loop = asyncio.get_running_loop()
        while True:
            await self._gone.wait()
            tried, at, born = None, loop.time(), -FRESH  # a socket there already may be new too
            while not self._watching():
                await asyncio.sleep(NOTICE)
                mark, now = self._socket_mark(), loop.time()
                if mark is None:
                    continue
                if mark != tried:
                    born = now
                if mark != tried or now - born < FRESH or now - at >= REVIVE:
                    tried, at = mark, now
                    await self._watcher.reconcile()
            self._gone.clear()

    def _socket_mark(self) -> tuple[int, int] | None:
        """Which socket file the server listens on now (a new server makes a new one), or None."""
        if self.server.kind == "path":
            path = self.server.socket
        else:
            base = os.environ.get("TMUX_TMPDIR") or "/tmp"
            path = os.path.join(base, f"tmux-{os.getuid()}", self.server.socket)
        try:
            found = os.stat(path)
        except OSError:
            return None
        return found.st_ino, found.st_ctime_ns

    async def capture(self, pane: str) -> Capture | None:
        """One tmux call: the pane's identity and its screen, with colours (``-e``)."""
        status, out = await self.server.run_async(
            "display-message", "-p", "-t", pane, INFO, THEN, "capture-pane", "-p", "-e", "-t", pane
        )
        return parse(pane, self.server.socket, out) if status == 0 else None

    async def _read(self, pane: str) -> None:
        seen = await self.capture(pane)
        if seen is None or pane not in self._jobs:
            return
        record = self._record(pane)
        agent = seen.harness or (record.harness if record is not None else None)
        catalog = load_catalog()
        detection = engine.detect(seen.screen, agent, catalog)
        self._dialogs.read(pane, detection.state if detection else None, self._clock(), seen.screen.lines)
        if detection is None:
            return
        process = (
            ProcessId(record.pid, record.start_ticks) if record is not None else procs.identity(seen.pid)
        )
        if process is None:
            return
        rules = catalog.agents.get(detection.agent)
        shown = self._shown.get(pane)
        if shown != (process, detection):
            if not self._settled(pane, detection):
                return
            self._shown[pane] = (process, detection)
            self.live.apply(self._claim(seen, detection, process=process))
            if rules is not None and not (rules.hook_reports_dialogs and rules.hook_reports_failures):
                was_dialog = shown is not None and shown[1].state == words.BLOCKED
                await asyncio.to_thread(self._badge_unreported, pane, detection, was_dialog, rules)
        if record is not None and rules is not None:
            await self._end_blocked(seen, record, detection, rules)
        if record is not None and self._shown.get(pane) == (process, detection):
            await self._overrule(seen, record, detection)

    def _claim(self, seen: Capture, detection: engine.Detection, **address: Any) -> Claim:
        claim = engine.claim(detection, self._clock(), **address)
        fields = {**claim.fields, "tmux": seen.tmux, "tty": seen.tty, "lane": INTERACTIVE}
        return dataclasses.replace(claim, fields=fields)

    async def _end_blocked(
        self, seen: Capture, record: records.Record, detection: engine.Detection, rules: AgentRules
    ) -> None:
        """End a hook's blocked whose dialog has left the screen, or look again when it may."""
        holder = self.live.roster.holder(record.session_key)
        verdict = self._dialogs.judge(
            seen.pane, record, holder, rules.sees_dialogs, self._clock(), rules.hook_reminders
        )
        if verdict is None:
            return
        if verdict.evidence is None:
            job = self._jobs.get(seen.pane)
            if job is not None and verdict.wait is not None:
                asyncio.get_running_loop().call_later(verdict.wait + 0.01, job.trigger)
            return
        claim = self._claim(seen, detection, session_key=record.session_key)
        outcome = self.live.overrule(dataclasses.replace(claim, event=DIALOG_CLOSED), verdict.evidence)
        if outcome.accepted:
            log.info("rosterd: %s: blocked ended by the screen: %s", record.session_key, verdict.evidence)
            await asyncio.to_thread(self._clear_badge, seen.pane, detection.state in words.BUSY)

    async def _overrule(self, seen: Capture, record: records.Record, detection: engine.Detection) -> None:
        """End a higher source's word that the settled reading's rule overrules: the roster
        takes the reading in its place, and the pane's badge says it where the hook's word was."""
        holder = self.live.roster.holder(record.session_key)
        evidence = overrules.judge(record, holder, detection.state, detection.overrules)
        if evidence is None:
            return
        claim = self._claim(seen, detection, session_key=record.session_key)
        outcome = self.live.overrule(claim, evidence, detection.overrules)
        if outcome.accepted:
            log.info("rosterd: %s: %s ended by the screen: %s", record.session_key, record.state, evidence)
            await asyncio.to_thread(self._badge_overruled, seen.pane, detection)

    def _badge_overruled(self, pane: str, detection: engine.Detection) -> None:
        """Write the reading on the pane's badge where it still says a word the rule overrules:
        a failed turn as the CLI ends one (no reply published), another state as it is."""
        badge = panestate.read(self.server, pane)
        if badge is None or badge.opt(words.STATE) not in detection.overrules:
            return
        if detection.state == words.ERROR:
            panestate.fail_turn(self.server, badge, detection.reason or "the turn failed")
        else:
            panestate.set_state(self.server, badge, detection.state, detection.reason or "")

    def _badge_unreported(
        self, pane: str, detection: engine.Detection, was_dialog: bool, rules: AgentRules
    ) -> None:
        """Put on the pane's badge what its integration cannot see: a dialog, a failed turn.

        A turn the integration says is working that shows a dialog is badged blocked, and one
        that shows the API's error ends as failed, as a hook that saw them would: the badge is
        the hook's word in the roster, and what ``roost send`` and ``wait-done`` go by. The
        dialog leaving the screen takes that blocked off again, since no event of the
        integration will (a turn's end waits while the badge says blocked).
        """
        dialog = detection.state == words.BLOCKED and not rules.hook_reports_dialogs
        failed = detection.state == words.ERROR and not rules.hook_reports_failures
        if not (dialog or failed):
            if was_dialog and not rules.hook_reports_dialogs:
                self._clear_badge(pane, detection.state in words.BUSY)
            return  # nothing to write: no tmux call to read the badge either
        badge = panestate.read(self.server, pane)
        if badge is None or badge.opt(words.STATE) != words.WORKING:
            return
        if dialog:
            panestate.set_state(self.server, badge, words.BLOCKED, detection.reason or "")
        else:
            panestate.fail_turn(self.server, badge, detection.reason or "the turn failed")

    def _clear_badge(self, pane: str, working: bool) -> None:
        """The pane's own 🛑 goes as the CLI clears it: to working when the screen shows the
        agent at work (an approved command still running), else to no state at all."""
        badge = panestate.read(self.server, pane)
        if badge is None or badge.opt(words.STATE) != words.BLOCKED:
            return
        if working:
            panestate.set_state(self.server, badge, words.WORKING)
        else:
            panestate.clear_declined(self.server, badge)

    def _settled(self, pane: str, detection: engine.Detection) -> bool:
        """Whether ``detection`` may be claimed now; an idle reading after a busy one waits.

        A reading that must wait schedules its own re-read, so a screen that then stays still
        (no output, so no watcher event) is still claimed once it has settled.
        """
        shown = self._shown.get(pane)
        was_busy = shown is not None and shown[1].state in words.BUSY
        if detection.state in words.BUSY or not was_busy:
            self._quiet_since.pop(pane, None)
            return True
        loop = asyncio.get_running_loop()
        since = self._quiet_since.setdefault(pane, loop.time())
        left = SETTLE - (loop.time() - since)
        if left <= 0:
            self._quiet_since.pop(pane, None)
            return True
        job = self._jobs.get(pane)
        if job is not None:
            loop.call_later(left + 0.01, job.trigger)
        return False

    def _record(self, pane: str) -> records.Record | None:
        """The live session shown in ``pane`` of this server, if the roster knows one."""
        for record in self.live.roster.records():
            where = record.tmux or {}
            if (
                record.liveness != records.ENDED
                and where.get("pane") == pane
                and where.get("socket") == self.server.socket
            ):
                return record
        return None
