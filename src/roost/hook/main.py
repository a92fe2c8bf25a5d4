"""The ``rosterd-hook`` entry point.

Usage: ``rosterd-hook [HARNESS]`` with the event as JSON on stdin; HARNESS defaults to
``claude``, whose settings name the bare command. Everything it does is bounded: a watchdog
ends the process at 800 ms with exit 0 whatever it was doing.
"""

from __future__ import annotations

import json
import os
import signal
import sys

DEADLINE = 0.8


def _give_up(_signum: int, _frame: object) -> None:
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGALRM, _give_up)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE)
    args = sys.argv[1:] if argv is None else argv
    harness = args[0] if args else "claude"
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        if isinstance(payload, dict):
            from roost.hook.apply import handle

            context = handle(harness, payload)
            if context:
                sys.stdout.write(context)
                sys.stdout.flush()
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
