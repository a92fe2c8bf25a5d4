"""What the person can run now: the PATH the web launcher searches, and gives what it starts.

The daemon's own PATH is the one it started with: often a service manager's short one, and
never what the person added after. They install agents where their shell looks
(``~/.local/bin``, an npm prefix, a version manager's folder), maybe a minute ago, and start
them in roost's panes through their own PATH. So the launcher asks again each time it lists
or starts something, and searches, in this order (the first folder holding a program wins, as
in a shell):

1. the PATH of the person's login shell (``$SHELL``, else their passwd entry's), started
   interactive too, since many set PATH in ``.bashrc`` or ``.zshrc``; it runs with no
   terminal, in a session of its own, its input closed, and is ended with all it started when
   it has not answered within :data:`SHELL_WAIT` (then it adds nothing);
2. the global environment of roost's tmux server: the PATH of whoever started it, which every
   pane inherits;
3. the daemon's own PATH.

A launched window is given that PATH, so what the launcher calls installed is what runs, and
what it runs finds its own helpers (``node`` under an npm CLI) the same way.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess

from roost.actions.sessions import Door
from roost.pane.tmux import sessions

SHELL_WAIT = 5.0
"""Seconds the login shell may take to say its PATH (a slow ``.bashrc`` takes about one)."""
_MARK = "\x1eroost-path\x1e"
"""Fences the PATH the shell prints: its start-up files may print anything around it."""


def login_shell() -> str:
    """The person's shell: ``$SHELL``, else their passwd entry's, else ``/bin/sh``."""
    shell = os.environ.get("SHELL")
    if not shell:
        try:
            shell = pwd.getpwuid(os.getuid()).pw_shell
        except KeyError:
            shell = ""
    return shell or "/bin/sh"


def shell_path(shell: str, wait: float = SHELL_WAIT) -> str | None:
    """The PATH ``shell`` has once its login and interactive start-up files ran; None when it
    cannot say (it is missing, fails, or takes longer than ``wait``)."""
    script = f"printf '%s' '{_MARK}'; printenv PATH; printf '%s' '{_MARK}'"
    try:
        proc = subprocess.Popen(
            [shell, "-l", "-i", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=os.path.expanduser("~"),
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = proc.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        # Its start-up files may have started others in its session: end them all.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        return None
    parts = out.decode(errors="replace").split(_MARK)
    if len(parts) < 3:
        return None
    return parts[-2].strip() or None


def search_path(door: Door) -> str:
    """The PATH to search and to launch with, made anew on every call (see the module's
    docstring); blocks for up to :data:`SHELL_WAIT`, so call it off the event loop."""
    said = [
        shell_path(login_shell()),
        sessions.global_environment(door.tmux, "PATH") if door.tmux is not None else None,
        os.environ.get("PATH"),
    ]
    folders: list[str] = []
    for path in said:
        for folder in (path or "").split(os.pathsep):
            if folder and folder not in folders:
                folders.append(folder)
    return os.pathsep.join(folders)


def which(program: str, path: str) -> str | None:
    """Where ``program`` is found on ``path``, or None."""
    return shutil.which(program, path=path)
