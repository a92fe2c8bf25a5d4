"""Sessions as a tmux user expects them: ``roost`` (attach), ``new``, ``kill``, ``ls``."""

from __future__ import annotations

import os
import sys

from roost.errors import NoServer, TargetGone, UsageError
from roost.tmux import sessions
from roost.tmux.panes import list_sessions
from roost.tmux.server import Server, TmuxError
from roost.tmux.targets import DEFAULT_SESSION


def attach(args: list[str]) -> int:
    """``roost``: attach the person to the server, creating session ``main`` if none."""
    if args:
        raise UsageError("usage: roost [attach]")
    server = Server.from_env()
    if not sessions.has_session(server, DEFAULT_SESSION) and not list_sessions(server):
        sessions.new_session(server, DEFAULT_SESSION, cwd=os.getcwd())
    target = DEFAULT_SESSION if sessions.has_session(server, DEFAULT_SESSION) else None
    argv = server.argv("attach-session", *(["-t", target] if target else []))
    if not sys.stdin.isatty():
        raise UsageError("usage: roost attaches a terminal; run it from one")
    os.execvp(argv[0], argv)
    return 0  # not reached: exec replaces this process


def new(args: list[str]) -> int:
    """``roost new [-d] [-s NAME] [-n WINDOW] [-c DIR] [cmd…]``: a new session; prints its %N."""
    name, window, cwd, detached = None, None, os.getcwd(), False
    rest = list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "-d":
            detached = True
        elif flag in ("-s", "-n", "-c"):
            if not rest:
                raise UsageError(f"usage: roost new: {flag} needs a value")
            value = rest.pop(0)
            if flag == "-s":
                name = value
            elif flag == "-n":
                window = value
            else:
                cwd = value
        elif flag == "--":
            break
        else:
            raise UsageError(f"usage: roost new [-d] [-s NAME] [-n WINDOW] [-c DIR] [cmd…] (unknown {flag})")
    server = Server.from_env()
    if name is None:
        taken = {s.name for s in list_sessions(server)}
        name = DEFAULT_SESSION if DEFAULT_SESSION not in taken else _free_name(taken)
    if sessions.has_session(server, name):
        raise UsageError(f"usage: roost new: session '{name}' already exists", exit_code=1)
    command = " ".join(rest) if rest else None
    try:
        pane_id = sessions.new_session(server, name, command, cwd=cwd, window_name=window)
    except TmuxError as error:
        raise UsageError(f"usage: roost new: {error}") from error
    print(pane_id)
    if not detached and sys.stdin.isatty():
        argv = server.argv("attach-session", "-t", name)
        os.execvp(argv[0], argv)
    return 0


def _free_name(taken: set[str]) -> str:
    n = 1
    while str(n) in taken:
        n += 1
    return str(n)


def kill(args: list[str]) -> int:
    """``roost kill [SESSION]``: end one session, or the whole server with no argument."""
    server = Server.from_env()
    if not server.running():
        raise NoServer(f"no roost server is running on socket '{server.socket}'")
    if len(args) > 1:
        raise UsageError("usage: roost kill [SESSION]")
    if not args:
        server.run("kill-server", check=False)
        return 0
    if not sessions.has_session(server, args[0]):
        raise TargetGone(f"can't find session '{args[0]}'")
    server.run("kill-session", "-t", f"={args[0]}")
    return 0


def ls(args: list[str]) -> int:
    if args:
        raise UsageError("usage: roost ls")
    server = Server.from_env()
    found = list_sessions(server)
    if not found:
        raise NoServer(f"no roost server is running on socket '{server.socket}'")
    for s in found:
        attached = " (attached)" if s.attached else ""
        print(f"{s.name}: {s.windows} windows{attached}")
    return 0


def run(verb: str, args: list[str]) -> int:
    handlers = {"attach": attach, "new": new, "kill": kill, "ls": ls}
    return handlers[verb](args)
