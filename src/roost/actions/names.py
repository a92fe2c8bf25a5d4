"""A name a person gives a session, kept so that restarting the daemon does not lose it.

A name given with ``rosterd name`` (``POST /sessions/{key}/name``) is a claim of the launcher
source, and the roster lives in memory only: a restarted daemon rebuilds a pane's session from
tmux and a process scan, and neither of those has the name. The runner keeps a headless
session's name with the rest of that session's entry. Every other session's name is kept here,
in ``${XDG_STATE_HOME}/roost/names.json`` (0600), and :func:`restore` claims it again as the
daemon starts.

A kept name belongs to exactly what it was given to: the session's occupant as the kernel names
it (pid, start time, boot) and, in a pane, that pane of that tmux server (socket, the server's
own start time and pid, pane id). It comes back only to a session whose occupant is still that
process in that pane. When the process ends, the name ends with it: its entry is dropped the
next time the file is written, and whatever runs in the pane next never inherits it. A pid or
pane id used again later never matches, because the start time or the server differs.
Clearing a name forgets it. A file that cannot be read is logged and treated as empty.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roost.base import files, paths
from roost.base.errors import UsageError
from roost.truth.detect import procs
from roost.truth.roster import Claim, Outcome, ProcessId, Record, check, records
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER

if TYPE_CHECKING:
    from roost.actions.sessions import Door, Found
    from roost.headless.runner.runner import Runner

log = logging.getLogger("rosterd")

PANE = ("socket", "server", "pane")
"""The fields of a record's ``tmux`` that name one pane across daemon restarts. tmux never
reuses a pane id while the server runs, and ``server`` (its start time and pid) tells one
server from the next that listens on the same socket."""


@dataclass(frozen=True)
class Kept:
    """One name as the file keeps it."""

    session_key: str
    name: str
    occupant: procs.Stamp
    pane: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_key": self.session_key,
            "name": self.name,
            "occupant": self.occupant.to_json(),
            "pane": self.pane,
        }

    @classmethod
    def from_json(cls, doc: object) -> Kept | None:
        """An entry read back; None unless every field has its type. A file is input too, and
        an entry that named the wrong process would give a person's name to someone else."""
        if not isinstance(doc, dict):
            return None
        key, name, pane = doc.get("session_key"), doc.get("name"), doc.get("pane")
        occupant = procs.Stamp.from_json(doc.get("occupant"))
        if not isinstance(key, str) or not isinstance(name, str) or not name or occupant is None:
            return None
        if pane is not None and not (
            isinstance(pane, dict)
            and set(pane) == set(PANE)
            and all(value is None or isinstance(value, str) for value in pane.values())
        ):
            return None
        return cls(key, name, occupant, pane)

    def alive(self) -> bool:
        """Whether the process the name was given to still runs (the same one, same boot)."""
        return procs.stamp(self.occupant.process) == self.occupant

    def fits(self, record: Record) -> bool:
        """Whether ``record`` is the session this name was given to: same occupant, same pane."""
        return (
            record.liveness != records.ENDED
            and ProcessId(record.pid, record.start_ticks) == self.occupant.process
            and _pane(record) == self.pane
        )


def give(live: Live, runner: Runner | None, key: str, label: str | None, at: float) -> Outcome:
    """Name the session ``key`` for every client, or with None clear the name given here (what
    a detector says shows again). The runner keeps a headless session's name for its next holder;
    any other session's is kept in the file until its occupant ends."""
    built = Claim(LAUNCHER, at, session_key=key, fields={"name": label})
    problem = check(built)
    if problem:
        raise UsageError(problem)
    headless = runner is not None and runner.owns(key)
    if runner is not None and headless:
        runner.rename(key, label)
    outcome = live.apply(built)
    record = live.roster.record(key)
    if not headless and outcome.accepted:
        _keep(key, _entry(record, label) if record is not None and label is not None else None)
    return outcome


@dataclass(frozen=True)
class Named:
    """The session a name was given to (or cleared on), and the roster's verdict on it."""

    key: str
    outcome: Outcome


def name(door: Door, target: str | Found, label: str | None) -> Named:
    """:func:`give` ``label`` (None: clear it) to the session ``target`` names, whichever its
    lane: TargetGone for no such session."""
    key = door.session(target).session_key
    return Named(key, give(door.live, door.runner, key, label, door.clock()))


def restore(live: Live, at: float) -> int:
    """Give each kept name back to its session, once the roster is rebuilt and before anything
    else may change it; names whose process ended are dropped. How many came back."""
    kept = [entry for entry in _load() if entry.alive()]
    restored, out = 0, []
    for entry in kept:
        record = next((r for r in live.roster.records() if entry.fits(r)), None)
        if record is not None:
            outcome = live.apply(
                Claim(LAUNCHER, at, session_key=record.session_key, fields={"name": entry.name})
            )
            if outcome.accepted:
                restored += 1
                entry = Kept(record.session_key, entry.name, entry.occupant, entry.pane)
        out.append(entry)  # a live process not seen this pass keeps its name for the next start
    _save(out)
    return restored


def _entry(record: Record, label: str) -> Kept | None:
    """The name as the file keeps it, tied to the occupant now; None when that already ended."""
    occupant = procs.stamp(ProcessId(record.pid, record.start_ticks))
    return Kept(record.session_key, label, occupant, _pane(record)) if occupant is not None else None


def _pane(record: Record) -> dict[str, Any] | None:
    tmux = record.tmux
    return {field: tmux.get(field) for field in PANE} if tmux else None


def _keep(key: str, entry: Kept | None) -> None:
    """Replace what the file says of ``key`` with ``entry`` (nothing, for None), dropping every
    name whose process has ended on the way."""
    others = [k for k in _load() if k.session_key != key and (entry is None or k.occupant != entry.occupant)]
    _save([k for k in others if k.alive()] + ([entry] if entry is not None else []))


def _load() -> list[Kept]:
    path = paths.given_names()
    try:
        doc: Any = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        log.warning("%s is unreadable and was ignored: %s", path, error)
        return []
    entries = doc.get("names") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        log.warning("%s holds no list of names and was ignored", path)
        return []
    return [kept for item in entries if (kept := Kept.from_json(item)) is not None]


def _save(kept: list[Kept]) -> None:
    path = paths.given_names()
    if not kept and not path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    files.replace(path, json.dumps({"names": [entry.to_json() for entry in kept]}, indent=1) + "\n")
