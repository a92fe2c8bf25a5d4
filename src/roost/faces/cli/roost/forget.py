"""``roost forget TARGET | --gone | --all``: delete kept replies, the one verb that does.

Only ``--all`` touches the events log, and it clears the whole log: cutting one pane's lines
out would move every cursor after them.
"""

from __future__ import annotations

from roost.base.errors import UsageError
from roost.pane.state import replies
from roost.pane.state.events import Log
from roost.pane.tmux.panes import list_panes
from roost.pane.tmux.server import Server
from roost.pane.tmux.targets import resolve

USAGE = "usage: roost forget TARGET | --gone | --all"


def run(verb: str, args: list[str]) -> int:
    if len(args) != 1 or (args[0].startswith("-") and args[0] not in ("--gone", "--all")):
        raise UsageError(USAGE)
    server = Server.from_env()
    if args[0] == "--all":
        replies.forget_all()
        log = Log.from_env()
        if log is not None:
            log.clear()
    elif args[0] == "--gone":
        panes = list_panes(server)
        replies.forget_gone(panes[0].server_key if panes else None, {p.id for p in panes})
    else:
        for pane in resolve(server, args[0]).panes:
            replies.forget_pane(pane.server_key, pane.id)
    return 0
