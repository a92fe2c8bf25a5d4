"""Sessions, windows and panes as a tmux user expects them.

``roost`` (attach), ``new``, ``kill`` and ``ls`` are for the person at the terminal; ``spawn``,
``split`` and ``view`` open things on an agent's behalf. Those three never change what the
person is looking at, and print only the new pane's ``%N`` on stdout so a script can capture it.

Whatever command they are handed is what runs, with the words it was handed: one word is a
shell command line, as tmux takes one (``roost view 'npm test -- --watch'``); several are a
program and its arguments, each still one argument in the pane (``roost view less "my file"``).
It runs in the caller's environment (:mod:`roost.pane.tmux.environ`), and when it exits soon after
it started its pane stays, with its last screen and exit status (:mod:`roost.pane.state.newpane`).
"""

from __future__ import annotations

import os
import sys
import time

from roost.base.errors import NoServer, TargetGone, UsageError
from roost.base.text import control, utf8
from roost.faces.cli.output import line, notice
from roost.pane.state import newpane, panestate
from roost.pane.state import words as w
from roost.pane.tmux import placement, sessions
from roost.pane.tmux.panes import Pane, list_panes, list_sessions, pane
from roost.pane.tmux.placement import Birth
from roost.pane.tmux.server import Server, TmuxError
from roost.pane.tmux.targets import DEFAULT_SESSION, resolve

SPAWN_USAGE = "usage: roost spawn [--worktree [--branch B]] NAME [cmd…]"
SPLIT_USAGE = "usage: roost split [-h|-v] [-t PANE] [-n NAME] [cmd…]"
VIEW_USAGE = "usage: roost view [-n NAME] cmd…"
VIEW_NAME = "view"
VIEW_MIN_COLS = 180
VIEW_SETTLE = 0.3
"""Seconds a view's command is watched before its ``%N`` is printed: a command that ends at
once (a pager given a file that is not there) closed its pane before anyone could read it."""


def attach(args: list[str]) -> int:
    """``roost``: attach the person to the server, creating session ``main`` if none."""
    if args:
        raise UsageError("usage: roost [attach]")
    # Refused before anything is made: a script that runs bare `roost` by mistake must not
    # leave a tmux server and a session behind it.
    if not sys.stdin.isatty():
        raise UsageError("usage: roost attaches a terminal; run it from one")
    server = Server.from_env()
    if not list_sessions(server) and os.environ.get("ROOST_RESTORE") == "1":
        _restore_first(server)
    if not sessions.has_session(server, DEFAULT_SESSION) and not list_sessions(server):
        sessions.new_session(
            server, DEFAULT_SESSION, cwd=os.getcwd(), birth=_birth(server, None, None, "attach")
        )
    target = DEFAULT_SESSION if sessions.has_session(server, DEFAULT_SESSION) else None
    argv = server.argv("attach-session", *(["-t", target] if target else []))
    os.execvp(argv[0], argv)
    return 0  # not reached: exec replaces this process


def _restore_first(server: Server) -> None:
    """``ROOST_RESTORE=1``: the first ``roost`` after the server is gone brings its layout back
    (``roost restore``) before attaching. Nothing to restore, or a record that is not usable,
    is said on stderr and the person gets session ``main`` as always: a terminal comes first."""
    from roost.base.errors import Conflict, NotRecorded, SetupError
    from roost.faces.cli.roost.restore import restore

    try:
        restore(server, dry_run=False, as_json=False, report=sys.stderr)
    except NotRecorded:
        return
    except (Conflict, SetupError, TmuxError) as error:
        notice("restore", error.message)


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
        raise UsageError(f"usage: roost new: session '{name}' already exists")
    for value in (name, window):
        if value is not None and not utf8(value):
            raise UsageError("usage: roost new: a session or window name must be valid UTF-8")
    command = _command(rest)
    try:
        pane_id = sessions.new_session(
            server, name, command, cwd=cwd, window_name=window, birth=_birth(server, None, command, "new")
        )
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
        plural = "" if s.windows == 1 else "s"
        line(f"{s.name}: {s.windows} window{plural}{attached}")
    return 0


def _birth(server: Server, session: str | None, command: str | None, verb: str) -> Birth:
    """What a pane opened in ``session`` (None: a new one) is born with: the caller's
    environment, and kept if ``command`` exits soon after it started (a shell is not)."""
    from roost.pane.tmux import environ

    passed, left_out = environ.callers(server, session, os.environ)
    if left_out:
        notice(
            verb,
            f"{len(left_out)} of this environment's variables are too large for one tmux command "
            f"and keep the server's values in the new pane: {', '.join(left_out)}",
        )
    return newpane.birth(passed, keep=command is not None)


def _caller(server: Server) -> Pane | None:
    """The pane this process runs in, when it is a live pane of this server."""
    pane_id = server.current_pane()
    return pane(server, pane_id) if pane_id else None


def _name(value: str, usage: str) -> str:
    """A pane name: shown on borders and matched by targets, so one printable line, and
    valid UTF-8, since a target can only name it if it is kept exactly."""
    if not value or control(value) is not None or not utf8(value):
        raise UsageError(f"{usage} (NAME must be non-empty, one line, valid UTF-8, no control characters)")
    return value


def _command(words: list[str]) -> str | None:
    """The command a new pane runs, as tmux takes it: one word is a shell command line, run
    as it is written; several are a program and its arguments, quoted so that the shell tmux
    runs them with gives each back as the one argument it was."""
    if len(words) < 2:
        return words[0] if words else None
    import shlex  # only a command of several words needs it

    return shlex.join(words)


def _flag_value(flag: str, rest: list[str], usage: str) -> str:
    if not rest:
        raise UsageError(f"{usage} ({flag} needs a value)")
    return rest.pop(0)


def _open_window(
    server: Server, session: str, name: str, command: str | None, verb: str, cwd: str | None = None
) -> placement.Opened:
    """A new window in ``session`` (in ``cwd``, or here), creating the session (and server)
    when it is missing."""
    cwd = cwd or os.getcwd()
    if sessions.has_session(server, session):
        return placement.new_window(
            server, session, name, command, cwd, _birth(server, session, command, verb)
        )
    birth = _birth(server, None, command, verb)
    pane_id = sessions.new_session(server, session, command, cwd=cwd, window_name=name, birth=birth)
    found = pane(server, pane_id)
    return placement.Opened(pane_id, found.window_index if found else None)


def _split(
    server: Server, beside_pane: Pane, *, beside: bool, command: str | None, verb: str
) -> placement.Opened:
    birth = _birth(server, beside_pane.session, command, verb)
    return placement.split(
        server, beside_pane.id, beside=beside, command=command, cwd=os.getcwd(), birth=birth
    )


def spawn(args: list[str]) -> int:
    """``roost spawn [--worktree [--branch B]] NAME [cmd…]``: a co-agent in its own window,
    never attached to; with ``--worktree``, in a git worktree and branch of its own."""
    worktree, branch, rest = False, None, list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--worktree":
            worktree = True
        elif flag == "--branch":
            branch = _flag_value(flag, rest, SPAWN_USAGE)
        else:
            raise UsageError(f"{SPAWN_USAGE} (unknown {flag})")
    if not rest:
        raise UsageError(SPAWN_USAGE)
    if branch is not None and not worktree:
        raise UsageError(f"{SPAWN_USAGE} (--branch goes with --worktree)")
    name = _name(rest[0], SPAWN_USAGE)
    command = _command(rest[1:])
    planned = None
    if worktree:
        from roost.pane.state import worktrees

        planned = worktrees.plan(os.getcwd(), name, branch)
    server = Server.from_env()
    caller = _caller(server)
    if planned is not None:
        worktrees.create(planned)
    where = planned.path if planned is not None else None
    opened = _open_window(
        server, caller.session if caller else DEFAULT_SESSION, name, command, "spawn", where
    )
    panestate.label(server, opened.pane, name)
    if planned is not None:
        panestate.worktree(server, opened.pane, planned.path, planned.branch)
    print(opened.pane)
    return 0


def split(args: list[str]) -> int:
    """``roost split``: a helper pane beside the caller's pane, or beside ``-t PANE``."""
    beside, target, name, rest = True, None, None, list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag in ("-h", "-v"):
            beside = flag == "-h"
        elif flag == "-t":
            target = _flag_value(flag, rest, SPLIT_USAGE)
        elif flag == "-n":
            name = _name(_flag_value(flag, rest, SPLIT_USAGE), SPLIT_USAGE)
        else:
            raise UsageError(f"{SPLIT_USAGE} (unknown {flag})")
    server = Server.from_env()
    if target is None:
        caller = _caller(server)
        if caller is None:
            raise UsageError(f"{SPLIT_USAGE} (outside roost, -t PANE says which pane to split)")
        beside_pane = caller
    else:
        found = resolve(server, target).panes
        beside_pane = next((p for p in found if p.active), found[0])
    opened = _split(server, beside_pane, beside=beside, command=_command(rest), verb="split")
    if name:
        panestate.label(server, opened.pane, name)
    print(opened.pane)
    return 0


def _min_cols() -> int:
    value = os.environ.get("ROOST_VIEW_MIN_COLS", "")
    if not value:
        return VIEW_MIN_COLS
    if not value.isdigit():
        raise UsageError(f"{VIEW_USAGE} (ROOST_VIEW_MIN_COLS must be a whole number, not '{value}')")
    return int(value)


def _close_views(server: Server, name: str, spare: str | None) -> None:
    """Replace, not stack: only panes ``view`` opened under this name, never a person's."""
    for p in list_panes(server, (w.NAME, w.VIEW)):
        if p.id != spare and p.options.get(w.NAME) == name and p.options.get(w.VIEW) == "1":
            placement.kill_pane(server, p.id)


def view(args: list[str]) -> int:
    """``roost view [-n NAME] cmd…``: show a person something without taking their focus."""
    name, rest = VIEW_NAME, list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag != "-n":
            raise UsageError(f"{VIEW_USAGE} (unknown {flag})")
        name = _name(_flag_value(flag, rest, VIEW_USAGE), VIEW_USAGE)
    if not rest:
        raise UsageError(VIEW_USAGE)
    command = _command(rest)
    min_cols = _min_cols()
    server = Server.from_env()
    _close_views(server, name, spare=server.current_pane())
    # Measured after the old view is gone: it was holding half of the caller's width.
    caller = _caller(server)
    beside = caller is not None and caller.width >= min_cols
    if caller is not None and beside:
        opened = _split(server, caller, beside=True, command=command, verb="view")
    else:
        opened = _open_window(server, caller.session if caller else DEFAULT_SESSION, name, command, "view")
    panestate.label(server, opened.pane, name, view=True)
    if _ended_at_once(server, opened.pane):
        # Kept dead for the person, it would show them nothing they asked to see: the caller is
        # told here instead, and the pane closed as it always was.
        placement.kill_pane(server, opened.pane)
        raise TargetGone(f"the command ended at once, so its view ({opened.pane}) has already closed")
    print(opened.pane)
    sys.stdout.flush()
    _directions(server, opened, caller, beside=beside)
    return 0


def _ended_at_once(server: Server, pane_id: str) -> bool:
    """Whether the view's pane closed within :data:`VIEW_SETTLE`: then it showed the person
    nothing, and no ``%N`` and no directions may say otherwise."""
    deadline = time.monotonic() + VIEW_SETTLE
    while True:
        found = pane(server, pane_id)
        if found is None or found.dead:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _directions(server: Server, opened: placement.Opened, caller: Pane | None, *, beside: bool) -> None:
    """Tell the person where the view is and which keys reach it, with their live prefix."""
    keys = placement.keys(server)
    prefix = placement.spoken(keys.prefix) if keys.prefix else None
    if beside:
        notice("view", f"open in the pane to the right ({opened.pane}).")
        go, back = keys.key_for("select-pane -R"), keys.key_for("select-pane -L")
        if prefix and go and back:
            notice("view", f"press {prefix} then {go} to go there; {prefix} then {back} comes back.")
        return
    index = opened.window_index
    if index is None:
        notice("view", f"opened {opened.pane}, which has already closed.")
        return
    session = caller.session if caller else DEFAULT_SESSION
    if caller is None:
        notice("view", f"open in window {index} of session {session} ({opened.pane}).")
    else:
        notice("view", f"open in window {index} ({opened.pane}).")
    go = keys.key_for(f"select-window -t :={index}")
    back = keys.key_for(f"select-window -t :={caller.window_index}") if caller else None
    chooser = keys.key_for("choose-tree -Zw", prefix=True)
    if prefix and go:
        how = f"press {prefix} then {go} to go there"
        how += f"; {prefix} then {back} comes back." if back else "."
    elif prefix and chooser:
        how = f"press {prefix} then {chooser} and pick window {index} to go there."
    else:
        how = f"select window {session}:{index} to go there."
    notice("view", how if caller else f"run roost to attach, then {how}")


def run(verb: str, args: list[str]) -> int:
    handlers = {
        "attach": attach,
        "new": new,
        "kill": kill,
        "ls": ls,
        "spawn": spawn,
        "split": split,
        "view": view,
    }
    return handlers[verb](args)
