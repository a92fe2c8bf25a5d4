"""The roster: rosterd's one truth about the agent sessions on this node.

Boundaries:

- Detectors produce claims and never set state; only the roster applies claims.
- Every node is the only writer of its own roster; peers' snapshots are kept beside it, never in it.
- A lower source never overwrites a value a higher one set, but may fill a null.
- The roster reads no clock, file, socket or environment: time is passed in, claims come in,
  records and changes go out. It is rebuilt from claims after a restart, never persisted.
- Faces read records, changes and explain views; they act on sessions elsewhere, never here.

The shortest use::

    roster = Roster("gibson", node_id, clock=time.time)
    roster.apply(Claim("hook", time.time(), process=ProcessId(pid, ticks), activity="working"))
    roster.snapshot()            # the rosterd.snapshot.v1 document
    roster.changes_since(seq)    # what happened since a client last looked
"""

from roost.truth.roster.changes import Change
from roost.truth.roster.claims import BadClaim, Claim, ProcessId, check, parse
from roost.truth.roster.hub import Outcome, Roster
from roost.truth.roster.precedence import SOURCES
from roost.truth.roster.records import SCHEMA, Record, answer, from_json, session_key, to_json

__all__ = [
    "SCHEMA",
    "SOURCES",
    "BadClaim",
    "Change",
    "Claim",
    "Outcome",
    "ProcessId",
    "Record",
    "Roster",
    "answer",
    "check",
    "from_json",
    "parse",
    "session_key",
    "to_json",
]
