"""What every pane roost opens is born with: its session id, where to report, where roost lives.

An agent with its own integration (OMP, Pi) reports its lifecycle to rosterd's reports socket.
It finds that socket in ``ROOST_REPORTS`` and names its session with ``ROOST_SESSION_ID``, a
fresh id per pane. roost keeps the same id in the pane's ``@roost-pane-session`` option, so the
daemon maps an id back to its pane and can then prove, from the process tree, that the reporter
is that pane's agent: the id names a session, it never vouches for whoever presents it.

The id is set once, as the pane is created, and never changes. It lives here, in the layer
that owns every ``@roost-*`` option; the terminal layer only writes what it is handed, in the
call that opens the pane (see :class:`roost.pane.tmux.placement.Birth`).

Whoever starts the server also tells it where ``roost`` lives (``@roost-bin``): the packaged
config's hooks call it to log closed panes, and a pane's PATH may not contain it.

A pane opened to run a command is *kept* when that command exits soon after it started: an agent
that fails at start (a bad key, a missing flag, a crash) would otherwise close its pane, and its
error with it, before anyone looked. The open sets the server option :data:`OPENING` in the same
tmux call; the packaged config's hooks see it and turn the new pane's ``remain-on-exit`` on before
tmux can notice the command end, then give it back to tmux after ``@roost-keep-exited`` seconds
(10), as that option reads at the open. A command that exits within them stays, dead, showing its
last screen and how it ended, until someone closes it; a later exit closes the pane as tmux would.
That ending is tmux's own, not a hook's: tmux before 3.6 can miss a pane's exit altogether and
never run ``pane-died`` (the config says how). A pane with no command (a shell) is a person's, and
its exit is meant: not kept.
"""

from __future__ import annotations

import os
import sys

from roost.base import paths
from roost.pane.state.layout import REWRITE
from roost.pane.tmux.placement import Birth

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SESSION_ID = "ROOST_SESSION_ID"
REPORTS = "ROOST_REPORTS"
PANE_SESSION = "@roost-pane-session"
BIN_OPTION = "@roost-bin"
OPENING = "@roost-opening"
"""Server option: set while a pane to keep is being opened, for the config's hooks to see."""


def fresh_id() -> str:
    """A session id no other pane has had: 128 random bits, so nobody can guess another pane's."""
    return os.urandom(16).hex()


def roost_bin() -> str:
    """The ``roost`` executable of this installation.

    Found with ``os.path``, and ``shutil`` imported only for the last resort: every ``roost
    new``, ``spawn`` and ``split`` asks, and pathlib and shutil would cost each ~8 ms at start.
    """
    here = os.path.realpath(sys.argv[0])
    if os.path.basename(here) == "roost" and os.path.exists(here):
        return here
    beside = os.path.join(os.path.dirname(sys.executable), "roost")
    if sys.executable and os.path.exists(beside):
        return beside
    import shutil

    return shutil.which("roost") or "roost"


def birth(env: Mapping[str, str] | None = None, *, keep: bool = False) -> Birth:
    """A new pane's id, its reports endpoint and the server's ``@roost-bin``; ``env``: more of
    its first process's environment (the caller's, :mod:`roost.pane.tmux.environ`, or the web
    launcher's PATH); ``keep``: a pane opened to run a command, kept when it exits soon after it
    started (see above).

    The id is forgotten from the session's environment once the pane has it: ``-e`` on
    new-session also writes the session's environment, and a pane opened later by plain tmux
    must never carry another pane's id. Once the options are set, the layout record is
    rewritten in the background (:mod:`roost.pane.state.layout`): the packaged config's hooks do
    that for every later change, but a server's first session runs them before it knows
    ``@roost-bin``.
    """
    session_id = fresh_id()
    return Birth(
        env={**(env or {}), SESSION_ID: session_id, REPORTS: paths.reports_socket_path()},
        forget=(SESSION_ID,),
        pane_options={PANE_SESSION: session_id},
        server_options={BIN_OPTION: roost_bin()},
        then=(REWRITE,),
        opening={OPENING: "1"} if keep else None,
    )
