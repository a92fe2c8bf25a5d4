"""``rosterd``: the daemon's command line.

Each verb lives in its own module under this package, imported only when called. A module
defines ``USAGE`` (a tuple of (usage, one-line summary) rows for ``rosterd help``) and
``run(verb, args) -> int``; adding a verb (``daemon``, ``list``, ``watch``, ``explain``, …) is
one row in ``VERBS`` plus its module. Exit codes: 0 ok, 1 a user error, 2 the daemon is
unreachable, 3 a peer was needed and is unreachable — raise ``RoostError`` with the code,
never exit by hand.
"""

from __future__ import annotations

import importlib
import sys

from roost.errors import RoostError

# verb -> module under roost.cli.rosterd; help lists the modules in this order
VERBS = {
    "list": "list",
    "watch": "watch",
    "changes": "changes",
    "status": "status",
    "read": "read",
    "explain": "explain",
    "name": "name",
    "daemon": "daemon",
    "doctor": "doctor",
    "integrate": "integrate",
    "detect": "detect",
    "ui": "ui",
    "open": "ui",
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
        sys.stderr.write(f"usage: rosterd: unknown command '{verb}' (see rosterd help)\n")
        return 1
    module = importlib.import_module(f"roost.cli.rosterd.{module_name}")
    try:
        return module.run(verb, args[1:])
    except RoostError as error:
        message = error.message
        sys.stderr.write(message + "\n" if message.startswith("usage:") else f"rosterd {verb}: {message}\n")
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
