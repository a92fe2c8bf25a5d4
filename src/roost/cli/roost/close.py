"""``roost close [--force] [--json] TARGET [TIMEOUT]``: end one agent its own way, close its pane.

close asks the agent to leave with its harness's exit command, waits for it to go, then
closes that one pane: never the window's other panes, never a session, never the server.
Everything it refuses, it refuses before typing or closing anything (the steps and refusals are
:mod:`roost.actions.leaving`'s, which rosterd's close action takes too). Kept replies stay:
only ``roost forget`` deletes them.
"""

from __future__ import annotations

from roost.actions.leaving import DEFAULT_TIMEOUT, leave
from roost.cli.output import document
from roost.errors import UsageError
from roost.tmux.server import Server

USAGE = "usage: roost close [--force] [--json] TARGET [TIMEOUT]"


def _parse(args: list[str]) -> tuple[bool, bool, str, int]:
    force = as_json = False
    rest = list(args)
    while rest and rest[0] in ("--force", "--json"):
        flag = rest.pop(0)
        force = force or flag == "--force"
        as_json = as_json or flag == "--json"
    if not rest or len(rest) > 2 or rest[0].startswith("-"):
        raise UsageError(USAGE)
    timeout = DEFAULT_TIMEOUT
    if len(rest) == 2:
        if not rest[1].isdigit():
            raise UsageError(f"{USAGE} (TIMEOUT is a whole number of seconds, not '{rest[1]}')")
        timeout = int(rest[1])
    return force, as_json, rest[0], timeout


def run(verb: str, args: list[str]) -> int:
    force, as_json, target, timeout = _parse(args)
    left = leave(Server.from_env(), target, force=force, timeout=timeout)
    if as_json:
        document(
            "close",
            target=target,
            pane=left.pane,
            state=left.state,
            harness=left.harness,
            exit_command=left.exit_command,
            forced=left.forced,
        )
    return 0
