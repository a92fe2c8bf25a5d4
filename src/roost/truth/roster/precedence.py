"""Who wins when two sources say different things about one field of one session.

Sources, highest first: the launcher that started the session knows most, then the ACP
stream rosterd drives itself, then an agent's own integration report, then hooks, the
harness's session files, the screen and title, and last a bare process scan. A lower source
never overwrites a value a higher one set, but may fill a null. Only the integration report
holds a lease: a reporter that falls silent for 30 seconds loses its say, so a crashed
reporter degrades to screen detection instead of freezing a badge. Hooks hold no lease,
because a harness waiting for its human may rightly fire no hook for hours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

LAUNCHER, ACP, INTEGRATION, HOOK, FILES, SCREEN, SCAN = (
    "launcher",
    "acp",
    "integration",
    "hook",
    "files",
    "screen",
    "scan",
)
SOURCES = (LAUNCHER, ACP, INTEGRATION, HOOK, FILES, SCREEN, SCAN)
_RANK = {source: rank for rank, source in enumerate(SOURCES)}

LEASES: Mapping[str, float] = {INTEGRATION: 30.0}
"""Seconds of silence after which a source's values no longer count."""


def rank(source: str) -> int:
    """0 for the highest source; a smaller rank wins."""
    return _RANK[source]


def outranks(source: str, other: str) -> bool:
    """Strictly higher: ``source`` may overwrite what ``other`` set, and not the reverse."""
    return _RANK[source] < _RANK[other]


def by_rank(sources: Iterable[str]) -> tuple[str, ...]:
    """Sources in precedence order, highest first, as records list them."""
    return tuple(sorted(set(sources), key=_RANK.__getitem__))


def lease_expired(source: str, heard_at: float | None, now: float) -> bool:
    """Whether a leased source has been silent too long; sources without a lease never expire."""
    lease = LEASES.get(source)
    if lease is None:
        return False
    return heard_at is None or now - heard_at >= lease


def out_of_order(source: str, last_seq: int | None, seq: int | None) -> str | None:
    """Why a claim's sequence cannot be accepted after ``last_seq``, or None when it can.

    Sequences are per source and per occupant; a claim without one is taken in arrival order,
    for sources (a scan pass) that have nothing to count with.
    """
    if seq is None or last_seq is None or seq > last_seq:
        return None
    if seq == last_seq:
        return f"replayed: {source} seq {seq} was already applied"
    return f"out of order: {source} seq {seq} is older than {last_seq}"
