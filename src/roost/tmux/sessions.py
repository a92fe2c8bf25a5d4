"""Starting roost's server and its sessions.

Whoever starts the server also tells it where ``roost`` lives (``@roost-bin``): the packaged
config's hooks call it to log closed panes, and a pane's PATH may not contain it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from roost.tmux import paneenv
from roost.tmux.server import Server


def roost_bin() -> str:
    """The ``roost`` executable of this installation."""
    here = Path(sys.argv[0]).resolve()
    if here.name == "roost" and here.exists():
        return str(here)
    beside = Path(sys.executable).with_name("roost")
    if beside.exists():
        return str(beside)
    return shutil.which("roost") or "roost"


def new_session(
    server: Server,
    name: str,
    command: str | None = None,
    cwd: str | None = None,
    window_name: str | None = None,
) -> str:
    """Create a detached session (starting the server if needed); returns its first ``%N``.

    The pane gets its own session id (see :mod:`roost.tmux.paneenv`). ``-e`` on new-session
    also writes the session's environment, and a server inherits its starter's: both forget the
    id again, so a pane opened later by plain tmux never carries another pane's.
    """
    session_id = paneenv.fresh_id()
    args = ["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, *paneenv.env_args(session_id)]
    if cwd:
        args += ["-c", cwd]
    if window_name:
        args += ["-n", window_name]
    if command:
        args.append(command)
    args += [";", "set-option", "-g", "@roost-bin", roost_bin()]
    # Untargeted, these act on the session just created.
    args += [";", "set-option", "-p", paneenv.PANE_SESSION, session_id]
    args += [";", "set-environment", "-u", paneenv.SESSION_ID]
    args += [";", "set-environment", "-gu", paneenv.SESSION_ID]
    return server.out(*args).strip().splitlines()[0]


def has_session(server: Server, name: str) -> bool:
    return server.run("has-session", "-t", f"={name}", check=False).returncode == 0
