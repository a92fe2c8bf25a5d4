"""Time as the roster sees it: an injected clock and one wire format for timestamps.

The roster never reads the wall clock itself. Whoever builds it passes a clock, so the daemon
uses real time and tests step time by hand; lease expiry and lingering ended sessions are then
exact, not racy.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], float]
"""Seconds since the Unix epoch, as ``time.time`` returns them."""


def to_wire(moment: float | None) -> str | None:
    """RFC 3339 in UTC with milliseconds: what every ``rosterd`` timestamp looks like on the wire."""
    if moment is None:
        return None
    stamp = datetime.fromtimestamp(moment, tz=UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def from_wire(text: object) -> float | None:
    """The reverse of :func:`to_wire`; also accepts a bare number of epoch seconds from older writers."""
    if text is None:
        return None
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        raise ValueError(f"timestamp must be text, got {type(text).__name__}")
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()
