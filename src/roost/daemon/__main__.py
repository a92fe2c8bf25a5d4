"""``python -m roost.daemon [--config PATH]``: the daemon without the ``rosterd`` dispatcher,
for service units and tests that must not depend on which verbs ``rosterd`` has wired."""

from __future__ import annotations

import sys

from roost.base.errors import RoostError
from roost.daemon.cli import run


def main() -> int:
    try:
        return run(sys.argv[1:])
    except RoostError as error:
        message = error.message
        sys.stderr.write(message + "\n" if message.startswith("usage:") else f"rosterd daemon: {message}\n")
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
