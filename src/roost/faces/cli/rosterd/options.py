"""Splitting a verb's arguments into flags, valued options and positionals, one way for all.

Options may come anywhere (``rosterd read KEY --json`` and ``rosterd read --json KEY`` are
the same call); ``--opt VALUE`` and ``--opt=VALUE`` both work; ``--`` ends the options, so a
LABEL may start with a dash. Anything unexpected is a usage error (exit 1).
"""

from __future__ import annotations

from roost.base.errors import UsageError


class Parsed:
    """What a verb was given. A plain class: ``dataclasses`` and ``typing`` would cost every verb
    ~10 ms at start."""

    __slots__ = ("flags", "positional", "values")

    def __init__(self, flags: frozenset[str], values: dict[str, str], positional: tuple[str, ...]) -> None:
        self.flags = flags
        self.values = values
        self.positional = positional


def parse(
    args: list[str],
    usage: str,
    *,
    flags: tuple[str, ...] = (),
    valued: tuple[str, ...] = (),
    positional: int | tuple[int, int] = 0,
) -> Parsed:
    """``positional`` is an exact count or an inclusive (least, most) range."""
    least, most = positional if isinstance(positional, tuple) else (positional, positional)
    seen: set[str] = set()
    values: dict[str, str] = {}
    rest: list[str] = []
    items = iter(args)
    for arg in items:
        if arg == "--":
            rest += items
            break
        name, eq, value = arg.partition("=")
        if name in valued:
            if not eq:
                following = next(items, None)
                if following is None:
                    raise UsageError(usage)
                value = following
            values[name] = value
        elif arg in flags:
            seen.add(arg)
        elif arg.startswith("-") and arg != "-":
            raise UsageError(usage)
        else:
            rest.append(arg)
    if not least <= len(rest) <= most:
        raise UsageError(usage)
    return Parsed(frozenset(seen), values, tuple(rest))
