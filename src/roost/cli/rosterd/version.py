"""``rosterd version``: which roost this daemon CLI belongs to."""

from __future__ import annotations

from roost import __version__
from roost.errors import UsageError

USAGE = (("version", "print the version"),)


def run(verb: str, args: list[str]) -> int:
    if args:
        raise UsageError(f"usage: rosterd {verb}")
    print(f"rosterd {__version__}")
    return 0
