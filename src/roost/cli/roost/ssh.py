"""``roost ssh HOST [subcommand…]``: the same roost, on another machine, over plain ssh.

No daemon is involved: ``ssh -t`` gives the remote roost a terminal, so a bare ``roost ssh
HOST`` attaches to that machine's agents and any subcommand runs there as if typed there.
"""

from __future__ import annotations

import os
import shlex

from roost.errors import SetupError, UsageError

USAGE = "usage: roost ssh HOST [subcommand…]"


def run(verb: str, args: list[str]) -> int:
    # A host that starts with a dash would be read by ssh as one of its own options.
    if not args or not args[0] or args[0].startswith("-"):
        raise UsageError(USAGE)
    host, rest = args[0], args[1:]
    # ssh hands the remote shell one string; quoting keeps each argument one word there.
    argv = ["ssh", "-t", host, shlex.join(["roost", *rest])]
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        raise SetupError(f"can't run ssh: {error.strerror}") from error
    return 0  # not reached: exec replaces this process
