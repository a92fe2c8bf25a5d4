"""``roost``: drive coding agents in roost's tmux server.

Each verb lives in its own module and is imported only when called, so that the hot verbs
(``send``, ``status``, ``state``) start in a bare interpreter's time plus their own work.
Every verb runs through :func:`roost.faces.cli.output.to_reader`: a reader that goes (``| head -1``)
ends it quietly with exit 0, and ``events --follow`` ends as soon as its reader goes.
"""

from __future__ import annotations

import os
import sys

from roost.base.errors import RoostError
from roost.faces.cli.output import complain, to_reader

QUICK_EXIT = frozenset({"read", "screen", "status"})
"""Verbs that only read and print: run as a command, they end with ``os._exit`` once their
output is flushed, skipping the interpreter's teardown (a few ms of a ~30 ms verb). They hold
no file, lock or thread that teardown would finish."""

# verb -> module under roost.faces.cli.roost that defines ``run(args: list[str]) -> int``
VERBS = {
    "send": "send",
    "read": "read",
    "screen": "screen",
    "wait-done": "wait",
    "whoami": "selfpane",
    "state": "selfpane",
    "reply": "selfpane",
    "identify": "selfpane",
    "_seen": "selfpane",
    "spawn": "windows",
    "split": "windows",
    "view": "windows",
    "new": "windows",
    "kill": "windows",
    "ls": "windows",
    "attach": "windows",
    "close": "close",
    "fork": "fork",
    "restore": "restore",
    "_layout": "restore",
    "status": "status",
    "events": "events",
    "forget": "forget",
    "doctor": "doctor",
    "ssh": "ssh",
    "api": "api",
    "completion": "completion",
    "__complete": "completion",
    "help": "helptext",
    "--help": "helptext",
    "-h": "helptext",
    "--version": "helptext",
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verb = args[0] if args else "attach"
    rest = args[1:]
    module_name = VERBS.get(verb)
    if module_name is None:
        complain(f"usage: roost: unknown command '{verb}' (see roost help)\n")
        return 1
    module = __import__(f"roost.faces.cli.roost.{module_name}", fromlist=("run",))

    def run() -> int:
        try:
            return module.run(verb, rest)
        except RoostError as error:
            complain(_line(verb, error))
            return error.exit_code

    status = to_reader(run, follow=verb == "events" and "--follow" in rest)
    if argv is None and verb in QUICK_EXIT:
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105 -- contextlib is not otherwise imported on these paths
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    return status


def _line(verb: str, error: RoostError) -> str:
    message = error.message
    if message.startswith("usage:"):
        return message + "\n"
    return f"roost {verb}: {message}\n"


if __name__ == "__main__":
    sys.exit(main())
