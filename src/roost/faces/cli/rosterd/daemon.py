"""``rosterd daemon [--config PATH]``: run the daemon in the foreground (see roost.daemon.cli).

A shim, so the dispatcher's table stays the one list of verbs; the daemon's own imports
(uvicorn, starlette) load only when this verb runs.
"""

from __future__ import annotations

from roost.daemon import cli

USAGE = cli.USAGE


def run(verb: str, args: list[str]) -> int:
    return cli.run(args)
