"""Turning what a scan pass saw into claims, sending each observation once.

Which process a pane's session is rooted at: its topmost known agent when one runs, else the
pane's own process (a custom program that badges itself with ``roost state``). The same rule
on every pass and after every restart gives the same session key for the same processes.

A pane's session is named by the pane's ``@roost-name`` (what ``roost spawn NAME``, ``-n`` and
the web launcher give it), as a hook's claim names it: an agent with no hooks installed is
still called what its pane is called, in ``rosterd list`` and on every node of a swarm, not by
its harness or its folder. A pass claims only what changed since the last pass (and, for
badges, what the record does not already say), so an idle machine produces no claims and no
change events; a pane seen exactly as on the last pass (same process, agent, options) is not
even looked at again. A session whose process is gone is ended; a pane badge that disappeared
leaves its session idle.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from roost.pane.state import words as w
from roost.truth.detect import badges, procs
from roost.truth.detect.scan import Agent, Observation, PaneSighting
from roost.truth.roster import Claim, ProcessId, Roster, records
from roost.truth.roster.precedence import HOOK, SCAN

INTERACTIVE, HEADLESS = "interactive", "headless"
GONE = "exit"
"""Why a session whose process vanished ended: the scan cannot tell a crash from an exit."""


def _tmux(sighting: PaneSighting, socket: str) -> dict[str, Any]:
    pane = sighting.pane
    return {
        "socket": socket,
        "server": pane.server_key,
        "session": pane.session,
        "window": pane.window_id,
        "window_index": pane.window_index,
        "window_name": pane.window_name,
        "pane": pane.id,
    }


class Reporter:
    """Remembers what it last claimed per process, so only changes become claims."""

    def __init__(self) -> None:
        self._scanned: dict[ProcessId, str] = {}
        self._badged: dict[ProcessId, badges.Badge] = {}
        # root -> the sighting last looked at: seen again unchanged, it claims nothing new
        self._sighted: dict[ProcessId, tuple[PaneSighting, str]] = {}

    def claims(self, observation: Observation, roster: Roster) -> list[Claim]:
        """The claims one pass adds, in the order to apply them."""
        out: list[Claim] = []
        seen: set[ProcessId] = set()
        sighted: dict[ProcessId, tuple[PaneSighting, str]] = {}
        for sighting in observation.panes:
            root = sighting.agent.process if sighting.agent else sighting.root
            sighted[root] = (sighting, observation.socket)
            if self._sighted.get(root) == sighted[root]:
                # Exactly as last pass, which remembered its badge and scan fields: ``_pane``
                # would claim nothing, and count it seen unless it has no badge and no agent.
                if sighting.agent is not None or badges.badged(sighting.pane):
                    seen.add(root)
                continue
            claims, settled = self._pane(sighting, observation, roster, seen)
            out += claims
            if not settled:  # read again next pass, not skipped as unchanged
                del sighted[root]
        self._sighted = sighted
        for agent in observation.outside:
            seen.add(agent.process)
            fields = {"harness": agent.harness, "cwd": agent.cwd, "tty": agent.tty, "lane": INTERACTIVE}
            out += self._scan(agent.process, agent.ancestors, agent.started_at, fields, observation.at)
        out += ended(roster.records(), observation.at)
        for memory in (self._scanned, self._badged):
            for gone in set(memory) - seen:
                del memory[gone]
        return out

    def _pane(
        self, sighting: PaneSighting, observation: Observation, roster: Roster, seen: set[ProcessId]
    ) -> tuple[list[Claim], bool]:
        """The pane's claims, and whether its badge was taken in (False: it was read too early
        to say anything, and the next pass must read it again)."""
        agent: Agent | None = sighting.agent
        badge = badges.read(sighting.pane)
        root = agent.process if agent else sighting.root
        if badge is None and agent is None and root not in self._badged:
            return [], True
        seen.add(root)
        ancestors = agent.ancestors if agent else ()
        started_at = agent.started_at if agent else sighting.started_at
        fields = {
            "harness": agent.harness if agent else None,
            "lane": INTERACTIVE,
            "tty": sighting.pane.tty or None,
            "tmux": _tmux(sighting, observation.socket),
        }
        if agent and agent.cwd:
            fields["cwd"] = agent.cwd
        name = sighting.pane.opt(w.NAME)
        if name:  # the pane's name (``roost spawn NAME``, ``-n``, the launcher's), as a hook's claim says it
            fields["name"] = name
        out = self._scan(root, ancestors, started_at, fields, observation.at)
        key = roster.find(root)
        record = roster.record(key) if key else None
        if record is not None and record.activity_at is not None and observation.at < record.activity_at:
            # The roster heard of an activity after this pass read the pane: a hook stamped the
            # badge and posted its claim between the two, so the badge read here is older than
            # the record and claiming it would undo the hook (working over an open dialog).
            return out, False
        previous = self._badged.get(root)
        if badge is not None and badge != previous:
            self._badged[root] = badge
            if not badges.shows(badge, record):
                received = min(badge.since or observation.at, observation.at)
                out.append(
                    Claim(
                        HOOK,
                        received,
                        process=root,
                        ancestors=ancestors,
                        activity=badge.word,
                        event=badge.event,
                        fields=badge.claim_fields(),
                        started_at=started_at,
                    )
                )
        elif badge is None and previous is not None:
            del self._badged[root]
            if record is not None and record.activity != records.IDLE:
                out.append(Claim(HOOK, observation.at, process=root, activity="idle", event=badges.CLEARED))
        return out, True

    def _scan(
        self,
        process: ProcessId,
        ancestors: tuple[ProcessId, ...],
        started_at: float,
        fields: dict[str, Any],
        at: float,
    ) -> list[Claim]:
        signature = repr(sorted(fields.items()))
        if self._scanned.get(process) == signature:
            return []
        self._scanned[process] = signature
        return [Claim(SCAN, at, process=process, ancestors=ancestors, fields=fields, started_at=started_at)]


def ended(live: Iterable[records.Record], at: float) -> list[Claim]:
    """End every live session whose process is gone, checked against /proc at this moment so a
    process that started after the scan's table was read is never ended by mistake. Headless
    sessions are the runner's to end: a suspended one has no process, and a crash is one only
    the runner can tell from a stop."""
    out = []
    for record in live:
        if record.liveness == records.ENDED or record.lane == HEADLESS:
            continue
        process = ProcessId(record.pid, record.start_ticks)
        if not procs.alive(process):
            out.append(Claim(SCAN, at, process=process, ended=GONE))
    return out
