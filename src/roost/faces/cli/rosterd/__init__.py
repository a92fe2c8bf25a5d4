"""``rosterd``: the daemon's command line.

Each verb lives in its own module under this package, imported only when called. A module
defines ``USAGE`` (a tuple of (usage, one-line summary) rows for ``rosterd help``) and
``run(verb, args) -> int``; adding a verb (``daemon``, ``list``, ``watch``, ``explain``, …) is
one row in ``VERBS`` plus its module. Exit codes are the specification's four: 0 ok, 1 a user
error, 2 the daemon is unreachable, 3 a peer was needed and is unreachable. A verb raises the
failure's class from :mod:`roost.base.errors` and never exits by hand; :func:`exit_code` is the one
place that turns a failure into one of the four, since the table's own codes are ``roost``'s
(where 2 also means "no such pane" and 3 "blocked on a dialog"). A reader that goes
(``rosterd list | head -1``) ends any verb quietly with exit 0, and the streams (``watch``,
``changes``) end as soon as it goes: see :func:`roost.faces.cli.output.to_reader`.
"""

from __future__ import annotations

import importlib
import sys

from roost.base.errors import RoostError
from roost.faces.cli.output import complain, to_reader

FOLLOWS = ("watch", "changes")
"""Verbs that wait between lines for as long as they run: they end when their reader goes."""

# verb -> module under roost.faces.cli.rosterd; help lists the modules in this order
VERBS = {
    "list": "list",
    "watch": "watch",
    "changes": "changes",
    "status": "status",
    "read": "read",
    "explain": "explain",
    "name": "name",
    "start": "headless",
    "prompt": "headless",
    "cancel": "headless",
    "stop": "headless",
    "suspend": "headless",
    "resume": "headless",
    "handoff": "headless",
    "allow": "answer",
    "deny": "answer",
    "spawn": "headless",
    "close": "close",
    "fork": "fork",
    "journal": "ledger",
    "usage": "ledger",
    "budget": "budget",
    "nodes": "swarm",
    "invite": "swarm",
    "join": "swarm",
    "revoke": "swarm",
    "leave": "swarm",
    "mcp": "mcp",
    "daemon": "daemon",
    "doctor": "doctor",
    "integrate": "integrate",
    "detect": "detect",
    "setup": "setup",
    "service": "service",
    "ui": "ui",
    "open": "ui",
    "completion": "completion",
    "__complete": "completion",
    "version": "version",
    "--version": "version",
    "help": "helptext",
    "--help": "helptext",
    "-h": "helptext",
}


def exit_code(error: RoostError) -> int:
    """The code ``rosterd`` exits with for ``error``: 3 when a peer this call needed did not
    answer (here, or as the daemon's ``peer_unreachable``), 2 when the daemon did not (the one
    ``Unavailable`` a rosterd verb meets), and 1 for every other failure, whatever code
    ``roost`` gives it: a node, member or session that does not exist is the caller's mistake
    to fix, not a daemon to start."""
    from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable, Unavailable
    from roost.faces.cli.daemonclient import Refused

    if isinstance(error, PeerUnreachable) or (isinstance(error, Refused) and error.code == PEER_UNREACHABLE):
        return PeerUnreachable.exit_code
    if isinstance(error, Unavailable):
        return Unavailable.exit_code
    return 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verb = args[0] if args else "help"
    module_name = VERBS.get(verb)
    if module_name is None:
        complain(f"usage: rosterd: unknown command '{verb}' (see rosterd help)\n")
        return 1
    module = importlib.import_module(f"roost.faces.cli.rosterd.{module_name}")

    def run() -> int:
        try:
            return module.run(verb, args[1:])
        except RoostError as error:
            message = error.message
            complain(message + "\n" if message.startswith("usage:") else f"rosterd {verb}: {message}\n")
            return exit_code(error)

    return to_reader(run, follow=verb in FOLLOWS)


if __name__ == "__main__":
    sys.exit(main())
