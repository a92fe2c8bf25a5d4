"""``--since``: a span back from now (``7d``, ``3h``, ``15m``) or an RFC 3339 time, as seconds.

``rosterd usage`` and ``rosterd journal`` check it before they ask the daemon (a bad value is
exit 1, daemon or not), and their routes check it again against the daemon's own clock.
:data:`PATTERN` is the same rule as a regular expression, for ``/openapi.json``; a value that
matches it but names no real moment (a 31st of February, hour 24) is refused as well.
"""

from __future__ import annotations

import re

from roost.errors import UsageError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SPAN = r"[0-9]{1,9}[smhdw]"
MOMENT = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
PATTERN = f"^({SPAN}|{MOMENT})$"
WANTED = (
    "a span back from now like 7d, 3h or 15m (units s, m, h, d, w), "
    "or an RFC 3339 time like 2026-12-01T09:00:00Z"
)


def parse(text: str, now: float, name: str = "--since") -> float:
    """The moment ``text`` names, in seconds since 1970 (a span reaching further back is 1970).
    :class:`~roost.errors.UsageError` (exit 1, HTTP 400) says what ``name`` wants instead, and
    not what was given: a route's query may hold anything a page or a proxy put there."""
    if re.fullmatch(SPAN, text):
        return max(0.0, now - int(text[:-1]) * UNITS[text[-1]])
    if re.fullmatch(MOMENT, text):
        from datetime import datetime

        try:
            return max(0.0, datetime.fromisoformat(text.upper()).timestamp())
        except ValueError:
            pass
    raise UsageError(f"{name} must be {WANTED}", field="since")
