"""Integration reports: agents that report their own lifecycle over rosterd's reports socket.

The shortest use (the daemon does this once)::

    reports = Reports(live.roster, live.apply, Attestor(server, names), time.time)
    await reports.serve(listen.unix(paths.reports_socket()))

A reporter (OMP, Pi, anything started in a roost pane) connects to ``$ROOST_REPORTS`` and
writes one JSON object per line, on one connection or several; each line is at most
:data:`LINE_LIMIT` bytes::

    {"session": "$ROOST_SESSION_ID", "activity": "blocked", "event": "ask", "seq": 7,
     "message": "waiting on you"}

Each line is answered with one line, ``{"accepted": true, "session_key": …}`` or
``{"accepted": false, "reason": …}``. A longer line is refused and the connection closed.

Process identity and ordering never come from report fields. Who reports is the kernel's word
(``SO_PEERCRED`` on the accepted socket), and a fresh look at the process tree must prove that
exact process is the named session's agent (:mod:`roost.truth.detect.attest`). Reports are applied in
the order they arrive; ``seq`` (per reporter, increasing) only lets the roster refuse a replay or
a report that arrives after a newer one. An accepted report is a claim with source
``integration``, which outranks hooks and the screen and holds a 30 s lease in the roster. A
refused one is counted, and recorded on the session it named (or else the reporter's own) so
``explain`` shows why. ``message`` becomes the pending request's summary when blocked, the
error reason on ``error``, and is otherwise dropped: status messages are not stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable
from typing import Any

from roost.base.validation import NESTING, Invalid, Strict, integer, text, too_deep, validated
from roost.base.validation import words as one_of
from roost.pane.state import words
from roost.truth.detect import procs
from roost.truth.detect.attest import Attestor, PaneRef, Proof, Unproven
from roost.truth.detect.peers import peer_of
from roost.truth.roster import Claim, Outcome, ProcessId, Roster, records
from roost.truth.roster.claimschema import CLAIMABLE_WORDS, COUNT_MAX, EVENT_LIMIT
from roost.truth.roster.precedence import INTEGRATION
from roost.truth.roster.times import Clock

LINE_LIMIT = 4096
"""Bytes a report line may hold, its newline not counted: a report is a few hundred."""
SESSION_LIMIT = 128
ERROR_LIMIT = 1000
"""Characters of ``message`` kept as an error reason (the roster's own limit)."""

# Why a report was refused, as counted in /status.
TOO_LONG, NOT_JSON, MALFORMED, UNPROVEN, REFUSED = "too_long", "not_json", "malformed", "unproven", "refused"


class BadReport(ValueError):
    """A line that is not a report; ``code`` says which kind of wrong, the message says how."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code


class Report(Strict):
    """What a reporter may say: its session's id, an activity word with its event, its sequence
    number, and optionally a message. Anything else in the line is ignored, a pid above all."""

    session: text(SESSION_LIMIT, least=1, one_line=True, what="the pane's ROOST_SESSION_ID")
    activity: one_of(sorted(CLAIMABLE_WORDS))
    event: text(EVENT_LIMIT, least=1, one_line=True, what="an event word")
    seq: integer(0, COUNT_MAX, "a non-negative integer, increasing with every report")
    message: text(LINE_LIMIT) | None = None

    def claim(self, proof: Proof, received_at: float) -> Claim:
        """The claim this report makes once its sender is proven to be the session's agent."""
        fields: dict[str, Any] = {"harness": proof.harness}
        if self.message is not None:
            if self.activity == words.ERROR:
                fields["error_reason"] = self.message[:ERROR_LIMIT]
            elif records.to_activity(self.activity) == records.NEEDS_ATTENTION:
                fields["pending"] = {"summary": self.message}
        return Claim(
            INTEGRATION,
            received_at,
            process=proof.process,
            ancestors=proof.ancestors,
            activity=self.activity,
            event=self.event,
            seq=self.seq,
            fields=fields,
            started_at=proof.started_at,
        )


def parse(line: bytes) -> Report:
    """One report line; raises :class:`BadReport` saying what is wrong with it."""
    if too_deep(line):
        raise BadReport(MALFORMED, f"a report nests arrays and objects at most {NESTING} deep")
    try:
        doc = json.loads(line)
    except (UnicodeDecodeError, ValueError) as error:
        raise BadReport(NOT_JSON, f"the report is not JSON: {error}") from None
    if not isinstance(doc, dict):
        raise BadReport(MALFORMED, "a report is a JSON object")
    try:
        return validated(Report, doc)
    except Invalid as refused:
        raise BadReport(MALFORMED, str(refused)) from None


class Reports:
    """The reports socket's server: reads lines, proves senders, hands claims to the roster."""

    def __init__(
        self, roster: Roster, apply: Callable[[Claim], Outcome], attestor: Attestor, clock: Clock
    ) -> None:
        self.roster = roster
        self._apply = apply
        self.attestor = attestor
        self._clock = clock
        self.counts: dict[str, Any] = {"accepted": 0, "rejected": 0, "rejected_by": {}}
        """Live counters; the daemon shows them under ``reports`` in ``/status``."""

    async def serve(self, sock: socket.socket) -> asyncio.Server:
        """Start serving on a bound unix socket; close the returned server to stop."""
        return await asyncio.start_unix_server(self._connection, sock=sock, limit=LINE_LIMIT)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = peer_of(writer.get_extra_info("socket"))
        try:
            while True:
                try:
                    line = await reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as eof:  # a last line without its newline
                    if eof.partial.strip():
                        await self._answer(writer, await self.handle(peer, eof.partial))
                    return
                except asyncio.LimitOverrunError:
                    reason = f"a report line is longer than {LINE_LIMIT} bytes; closing the connection"
                    await self._answer(writer, self._refuse(peer, None, None, TOO_LONG, reason))
                    return
                if line.strip():
                    await self._answer(writer, await self.handle(peer, line))
        except (ConnectionError, OSError):
            return
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def handle(self, peer: ProcessId | str, line: bytes) -> dict[str, Any]:
        """Take one line from ``peer``; returns the answer to write back."""
        try:
            report = parse(line)
        except BadReport as bad:
            return self._refuse(peer, None, None, bad.code, str(bad))
        if isinstance(peer, str):
            return self._refuse(peer, report, None, UNPROVEN, peer)
        try:
            proof = await asyncio.to_thread(self.attestor.prove, report.session, peer)
        except Unproven as unproven:
            return self._refuse(peer, report, unproven.pane, UNPROVEN, str(unproven))
        outcome = self._apply(report.claim(proof, self._clock()))
        if not outcome.accepted:  # the roster recorded why on the session itself
            self._count(REFUSED)
            reason = outcome.reasons[0] if outcome.reasons else "the roster refused the report"
            return {"accepted": False, "session_key": outcome.session_key, "reason": reason}
        self.counts["accepted"] += 1
        return {"accepted": True, "session_key": outcome.session_key, "reasons": list(outcome.reasons)}

    def _refuse(
        self, peer: ProcessId | str, report: Report | None, pane: PaneRef | None, code: str, reason: str
    ) -> dict[str, Any]:
        self._count(code)
        key = self._session_of(pane) or (None if isinstance(peer, str) else self._session_of_process(peer))
        if key is not None:
            received = self._clock()
            if report is None:
                noted = Claim(INTEGRATION, received, session_key=key)
            else:
                noted = Claim(
                    INTEGRATION,
                    received,
                    session_key=key,
                    activity=report.activity,
                    event=report.event,
                    seq=report.seq,
                )
            self.roster.refuse(key, noted, reason)
        return {"accepted": False, "session_key": key, "reason": reason}

    def _count(self, code: str) -> None:
        self.counts["rejected"] += 1
        by = self.counts["rejected_by"]
        by[code] = by.get(code, 0) + 1

    def _session_of(self, pane: PaneRef | None) -> str | None:
        """The live session shown in ``pane``: by the scan's tmux record, or rooted at its process."""
        if pane is None:
            return None
        shown = (pane.pane_id, self.attestor.server.socket)
        for record in self.roster.records():
            tmux = record.tmux or {}
            if record.liveness != records.ENDED and (tmux.get("pane"), tmux.get("socket")) == shown:
                return record.session_key
        return self.roster.find(pane.root)

    def _session_of_process(self, process: ProcessId) -> str | None:
        """The session a reporter itself belongs to, if any: for a refusal that names no pane."""
        for candidate in (process, *procs.ancestors(process.pid)):
            key = self.roster.find(candidate)
            if key is not None:
                return key
        return None

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, answer: dict[str, Any]) -> None:
        writer.write(json.dumps(answer).encode() + b"\n")
        await writer.drain()
