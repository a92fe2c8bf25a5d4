"""``rosterd``: the daemon's command line.

Each verb lives in its own module under this package, imported only when called. A module
defines ``USAGE`` (a tuple of (usage, one-line summary) rows for ``rosterd help``) and
``run(verb, args) -> int``; adding a verb (``daemon``, ``list``, ``watch``, ``explain``, …) is
one row in ``VERBS`` plus its module. Exit codes: 0 ok, 1 a user error, 2 the daemon is
unreachable, 3 a peer was needed and is unreachable — raise the failure's class from
:mod:`roost.errors`, which carries the code, never exit by hand. A reader that goes
(``rosterd list | head -1``) ends any verb quietly with exit 0, and the streams (``watch``,
``changes``) end as soon as it goes: see :func:`roost.cli.output.to_reader`.
"""

from __future__ import annotations

import importlib
import sys

from roost.cli.output import complain, to_reader
from roost.errors import RoostError

FOLLOWS = ("watch", "changes")
"""Verbs that wait between lines for as long as they run: they end when their reader goes."""

# verb -> module under roost.cli.rosterd; help lists the modules in this order
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verb = args[0] if args else "help"
    module_name = VERBS.get(verb)
    if module_name is None:
        complain(f"usage: rosterd: unknown command '{verb}' (see rosterd help)\n")
        return 1
    module = importlib.import_module(f"roost.cli.rosterd.{module_name}")

    def run() -> int:
        try:
            return module.run(verb, args[1:])
        except RoostError as error:
            message = error.message
            complain(message + "\n" if message.startswith("usage:") else f"rosterd {verb}: {message}\n")
            return error.exit_code

    return to_reader(run, follow=verb in FOLLOWS)


if __name__ == "__main__":
    sys.exit(main())
