"""``--since``: a span back from now (``7d``, ``3h``, ``15m``) or an RFC 3339 time, as seconds.

``rosterd usage`` and ``rosterd journal`` check it before they ask the daemon (a bad value is
exit 1, daemon or not), and their routes check it again against the daemon's own clock.
:data:`PATTERN` is the same rule as a regular expression, for ``/openapi.json``: it knows the
calendar, so a value that names no real moment (a 31st of February, hour 24) matches it no more
than the parser takes it.
"""

from __future__ import annotations

import re

from roost.base.errors import UsageError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SPAN = r"[0-9]{1,9}[smhdw]"
_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DAY = (
    f"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    f"|02-(?:0[1-9]|1[0-9]|2[0-8]))|{_LEAP}-02-29)"
)
"""A day of the calendar: years 0001 to 9999, each month its own length, 29 February in leap years."""
_CLOCK = "(?:[01][0-9]|2[0-3]):[0-5][0-9]"
MOMENT = f"{_DAY}[Tt ]{_CLOCK}:[0-5][0-9](?:\\.[0-9]{{1,9}})?(?:[Zz]|[+-]{_CLOCK})"
PATTERN = f"^({SPAN}|{MOMENT})$"
WANTED = (
    "a span back from now like 7d, 3h or 15m (units s, m, h, d, w), "
    "or an RFC 3339 time like 2026-12-01T09:00:00Z"
)


def parse(text: str, now: float, name: str = "--since") -> float:
    """The moment ``text`` names, in seconds since 1970 (a span reaching further back is 1970).
    :class:`~roost.base.errors.UsageError` (exit 1, HTTP 400) says what ``name`` wants instead, and
    not what was given: a route's query may hold anything a page or a proxy put there. A value
    :data:`MOMENT` matches is a real moment, so the document's pattern is the whole rule."""
    if re.fullmatch(SPAN, text):
        return max(0.0, now - int(text[:-1]) * UNITS[text[-1]])
    if re.fullmatch(MOMENT, text):
        from datetime import datetime

        return max(0.0, datetime.fromisoformat(text.upper()).timestamp())
    raise UsageError(f"{name} must be {WANTED}", field="since")
