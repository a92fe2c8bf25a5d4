"""How a headless session shows in the roster: the runner's claims about it, built in one place.

What the session was launched with is claimed as source ``launcher`` (harness, folder, lane
``headless``, policy, liveness, the holder); everything its ACP stream says as source ``acp``,
numbered in the order it was said. The roster applies them like any other claims, so every face
reads a headless session the way it reads a terminal one. Starting, resuming, suspending and
rebuilding all claim through here, so a session's identity reads the same whichever of them
said it last.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from roost.base import paths
from roost.headless.runner.headless import Headless
from roost.headless.runner.traffic import Said
from roost.truth.detect import procs
from roost.truth.roster import Claim, ProcessId, Record, records
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import ACP, LAUNCHER

log = logging.getLogger("rosterd")


class Claims:
    """The runner's claims about its sessions, applied to the live roster at the runner's clock."""

    def __init__(self, live: Live, clock: Callable[[], float]) -> None:
        self.live = live
        self._clock = clock

    def session_key(self, process: ProcessId) -> str:
        """The key of a session whose first holder is ``process``, on this node."""
        return records.session_key(self.live.roster.node_id, process.pid, process.start_ticks)

    def identity(self, h: Headless, *, fresh: bool) -> None:
        """What the session was launched with, as its launcher; ``fresh`` also says when it
        started (a new occupant of its key)."""
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
        self.claim(
            h, LAUNCHER, fields=fields, process=h.process, started_at=entry.started_at if fresh else None
        )

    def holder(self, h: Headless) -> None:
        """The holder that keeps the session now."""
        self.claim(h, LAUNCHER, fields={"holder": _holder(h)})

    def suspended(self, h: Headless) -> None:
        """The session has no holder: suspended, its record kept."""
        self.claim(h, LAUNCHER, fields={"liveness": records.SUSPENDED, "holder": None})

    def heard(self, h: Headless, said: Said) -> None:
        """What the session's link heard from its adapter just now: the session was active."""
        h.last_active = self._clock()
        self.say(h, said)

    def say(self, h: Headless, said: Said) -> None:
        """What the ACP stream said, as the next of the session's ``acp`` claims."""
        h.seq += 1
        fields = dict(said.fields)
        if said.activity is None and not fields:
            return
        self.claim(h, ACP, activity=said.activity, event=said.event, fields=fields, seq=h.seq, at=said.at)

    def ended(self, h: Headless, reason: str) -> None:
        """The session is over (``exit``, ``crash``)."""
        self.live.apply(Claim(ACP, self._clock(), session_key=h.entry.key, ended=reason))

    def claim(
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

    def record(self, h: Headless) -> Record:
        """The session's record as the roster has it after the runner's claims."""
        record = self.live.roster.record(h.entry.key)
        assert record is not None
        return record


def _holder(h: Headless) -> dict[str, Any]:
    """The record's ``holder``: its key, its pid and its adapter's, and its socket."""
    adapter = procs.Stamp.from_json(h.entry.adapter_process)
    return {
        "key": h.entry.holder,
        "pid": h.process.pid if h.process else None,
        "adapter_pid": adapter.pid if adapter else None,
        "socket": str(paths.holder_socket(h.entry.holder or "")),
    }
