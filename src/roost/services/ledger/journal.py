"""The journal: when each session started, ended, was suspended or resumed, and who answered
its permission requests, from where. Never a prompt, a reply, a recap, a pending request's
summary or any other text an agent wrote: a line holds the session's key, name, harness, lane
and harness session id, and the words below.

Lifecycle lines are read off the roster's records as they change (:meth:`Journal.observe`,
fed by :class:`roost.services.ledger.follow.Ledger`), for both lanes alike:

- ``start``: a record appears. Reason ``new``, or ``found`` when it is first seen as a
  daemon starts (it began while no rosterd watched).
- ``end``: liveness becomes ``ended``. Reason: the record's ``ended_reason`` (``exit``,
  ``crash``, ``reboot``, ``killed``, ``expired``).
- ``suspend``: liveness becomes ``suspended``. Reason ``idle_timeout`` or ``requested`` (the
  runner's next activity event says which), or null (a resume that failed).
- ``resume``: ``suspended`` becomes ``live`` (reason ``resumed``), or a crashed session is
  continued under a new key (``after_crash``, after that key's own start).

A start also says ``started_at``; an ``answer`` line (:meth:`Journal.answered`) says ``answer``,
``by`` and ``via`` instead of a reason, and ``through``: the node an answer came through from
another node of the swarm (null for one given on this node). An ``act`` line
(:meth:`Journal.acted`) is an action another node forwarded to this one, the session's owner:
``action`` (the API verb or MCP tool), ``by``, ``via``, ``through`` and ``through_id`` (that
node's name and id), and the ``status`` this node answered it with.

A daemon restart rebuilds the roster, and every session in it appears again: the journal
remembers which keys it journalled as started and not yet ended (:meth:`Journal.recall` reads
them back from its own files as the daemon starts), and a key it knows is not started twice.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from roost.base import paths
from roost.base.text import shown
from roost.services.ledger.lines import Lines
from roost.truth.roster import pending, records
from roost.truth.roster.hub import Roster
from roost.truth.roster.records import Record
from roost.truth.roster.times import Clock, from_wire, to_wire

log = logging.getLogger("rosterd")

FILE = "journal.jsonl"
START, END, SUSPEND, RESUME, ANSWER, ACT = "start", "end", "suspend", "resume", "answer", "act"
KINDS = (START, END, SUSPEND, RESUME, ANSWER, ACT)
NEW, FOUND = "new", "found"
RESUMED, AFTER_CRASH = "resumed", "after_crash"
SUSPENDED_BY = {"idle_timeout": "idle_timeout", "suspended": "requested"}
"""The runner's activity event that follows a suspension, and the reason the journal gives."""
CRASH_RESUMED = "resumed_after_crash"
"""The runner's activity event for a crashed session continued under a new key."""

ANSWERS = pending.ANSWERS
VIA = ("api", "cli", "mcp", "web", "terminal")
BY_LIMIT = 120
"""Characters of who answered that are kept."""
KEY_LIMIT = 256
STARTS_AND_ENDS = re.compile(
    rb'^\{"at":"[^"]*","kind":"(?P<kind>start|end)","session_key":(?P<key>"[^"\n]*")', re.MULTILINE
)
"""A start or end line as this module writes it (keys in this order), read without JSON."""


class Journal:
    """The journal file, what it remembers of it, and the lines written to it."""

    def __init__(self, roster: Roster, clock: Clock, lines: Lines | None = None) -> None:
        self._roster = roster
        self._clock = clock
        self.lines = lines or Lines(paths.ledger_dir() / FILE)
        self._open: set[str] = set()
        self._suspending: dict[str, tuple[Record, float]] = {}

    def recall(self) -> None:
        """Read back the keys journalled as started and not ended (before :meth:`baseline`;
        in a thread if it likes: a full file takes tens of milliseconds)."""
        started: set[str] = set()
        try:
            for match in self.lines.matches(STARTS_AND_ENDS):
                key = _text(match["key"])
                if key is not None and match["kind"] == START.encode():
                    started.add(key)
                elif key is not None:
                    started.discard(key)
        except OSError as error:
            log.warning("the journal could not be read back (%s): sessions may be started again", error)
        self._open = started

    # Reading.

    def entries(self, since: float | None = None) -> list[dict[str, Any]]:
        """Every line kept (at or after ``since``), oldest first; runs in a thread if it likes."""
        return [doc for doc in self.lines.read() if _kept(doc, since)]

    # Writing: what the follower saw.

    def baseline(self, present: Iterable[Record], at: float) -> None:
        """The roster as the daemon starts: a session the journal never started began while no
        rosterd watched, and is started now as ``found``."""
        for record in present:
            if record.liveness != records.ENDED and record.session_key not in self._open:
                self._start(record, at, FOUND)

    def observe(self, before: Record | None, after: Record, at: float) -> None:
        """One published change of a session: ``before`` is its previous record (None: it is new)."""
        key = after.session_key
        suspending = self._suspending.pop(key, None)
        if suspending is not None:
            self._suspend(*suspending, SUSPENDED_BY.get(after.activity_event or ""))
        if before is None:
            if after.liveness != records.ENDED and key not in self._open:
                self._start(after, at, NEW)
            return
        if after.liveness != before.liveness:
            if after.liveness == records.ENDED:
                self._open.discard(key)
                self._write(END, after, at, reason=after.ended_reason)
            elif after.liveness == records.SUSPENDED:
                self._suspending[key] = (after, at)  # its reason is the runner's next word
            elif before.liveness == records.SUSPENDED:
                self._write(RESUME, after, at, reason=RESUMED)
        elif after.activity_event == CRASH_RESUMED != before.activity_event:
            self._write(RESUME, after, at, reason=AFTER_CRASH)

    def flush(self) -> None:
        """The end of a batch of changes: a suspension whose reason did not follow has none."""
        for record, at in self._suspending.values():
            self._suspend(record, at, None)
        self._suspending.clear()

    def gone(self, record: Record, at: float) -> None:
        """A session left the roster unseen (the follower fell behind): it ended, how is unknown."""
        self._suspending.pop(record.session_key, None)
        if record.liveness != records.ENDED:
            self._open.discard(record.session_key)
            self._write(END, record, at, reason=None)

    # Writing: a permission answered.

    def answered(
        self, session_key: str, *, answer: str, by: str, via: str, through: str | None = None
    ) -> None:
        """Someone answered a session's permission request: ``answer`` (``allow``,
        ``allow_always``, ``reject``), ``by`` whom (a short label: ``uid 1000 pid 4242
        (rosterd)``, ``browser``, ``bearer``, ``mcp``; control characters are escaped, and it is
        cut to 120 characters) and ``via`` what (``api``, ``cli``, ``mcp``, ``web``,
        ``terminal``), ``through`` which node when it came from another (its name). The
        session's name, harness and lane come from the roster. ValueError for an answer,
        ``via`` or key outside those rules, or an empty ``by``."""
        if answer not in ANSWERS:
            raise ValueError(f"answer must be one of {', '.join(ANSWERS)}; got {answer!r}")
        about, who = self._who(ANSWER, session_key, by, via)
        node = shown(through).strip()[:BY_LIMIT] if through else None
        self.lines.append({**about, "answer": answer, "by": who, "via": via, "through": node})

    def acted(
        self, session_key: str, *, action: str, by: str, via: str, through: str, through_id: str, status: int
    ) -> None:
        """Another node forwarded an action on this node's session: ``action`` (the verb or
        tool), ``by`` whom and ``via`` what on that node, ``through`` which node (its name and
        ``through_id``), and the ``status`` it was answered with. The same rules as
        :meth:`answered` for the key, ``by`` and ``via``."""
        about, who = self._who(ACT, session_key, by, via)
        self.lines.append(
            {
                **about,
                "action": shown(action)[:BY_LIMIT],
                "by": who,
                "via": via,
                "through": shown(through).strip()[:BY_LIMIT],
                "through_id": shown(through_id)[:BY_LIMIT],
                "status": status,
            }
        )

    def _who(self, kind: str, session_key: str, by: str, via: str) -> tuple[dict[str, Any], str]:
        """A line's fields about the session, and ``by`` as kept; ValueError for a bad one."""
        if via not in VIA:
            raise ValueError(f"via must be one of {', '.join(VIA)}; got {via!r}")
        if not isinstance(session_key, str) or not 0 < len(session_key) <= KEY_LIMIT:
            raise ValueError(f"session_key must be text of 1 to {KEY_LIMIT} characters")
        who = shown(by).strip()[:BY_LIMIT] if isinstance(by, str) else ""
        if not who:
            raise ValueError("by must name who answered")
        record = self._roster.record(session_key)
        return _about(shown(session_key), record, self._clock(), kind), who

    def _start(self, record: Record, at: float, reason: str) -> None:
        self._open.add(record.session_key)
        self._write(START, record, at, reason=reason, started_at=to_wire(record.started_at))

    def _suspend(self, record: Record, at: float, reason: str | None) -> None:
        self._write(SUSPEND, record, at, reason=reason)

    def _write(self, kind: str, record: Record, at: float, **fields: Any) -> None:
        self.lines.append({**_about(record.session_key, record, at, kind), **fields})


def _text(quoted: bytes) -> str | None:
    """A JSON string as written (quotes included), or None if it is not one."""
    if b"\\" not in quoted:
        with contextlib.suppress(UnicodeDecodeError):
            return quoted[1:-1].decode()
    with contextlib.suppress(ValueError):
        value = json.loads(quoted)
        return value if isinstance(value, str) else None
    return None


def _about(key: str, record: Record | None, at: float, kind: str) -> dict[str, Any]:
    """The fields every line has: when, what kind, and which session (null where unknown)."""
    return {
        "at": to_wire(at),
        "kind": kind,
        "session_key": key,
        "name": record.name if record else None,
        "harness": record.harness if record else None,
        "lane": record.lane if record else None,
        "session_id": record.session_id if record else None,
    }


def _kept(doc: dict[str, Any], since: float | None) -> bool:
    """A line this module wrote (not a hand edit), at or after ``since``."""
    if doc.get("kind") not in KINDS or not isinstance(doc.get("session_key"), str):
        return False
    if not isinstance(doc.get("at"), str):
        return False
    try:
        at = from_wire(doc.get("at"))
    except ValueError:
        return False
    return at is not None and (since is None or at >= since)
