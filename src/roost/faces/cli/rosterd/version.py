"""``rosterd version [--json]``: which roost this daemon CLI belongs to.

``--json`` prints a schema-1 document (``{"schema": 1, "command": "version", "version": …}``):
there is no API resource for it, and asking the daemon would make the answer depend on one.
"""

from __future__ import annotations

from roost import __version__
from roost.faces.cli.output import document
from roost.faces.cli.rosterd.options import parse

USAGE = (("version [--json]", "print the version"),)


def run(verb: str, args: list[str]) -> int:
    options = parse(args, f"usage: rosterd {verb} [--json]", flags=("--json",))
    if "--json" in options.flags:
        document("version", version=__version__)
    else:
        print(f"rosterd {__version__}")
    return 0
