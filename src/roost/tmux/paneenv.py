"""What every pane roost opens carries in its environment: which session it is, where to report.

An agent with its own integration (OMP, Pi) reports its lifecycle to rosterd's reports socket.
It finds that socket in ``ROOST_REPORTS`` and names its session with ``ROOST_SESSION_ID``, a
fresh id per pane. roost keeps the same id in the pane's ``@roost-pane-session`` option, so the
daemon maps an id back to its pane and can then prove, from the process tree, that the reporter
is that pane's agent: the id names a session, it never vouches for whoever presents it.

The id is set once, when the pane is created, and never changes; it is not pane *state*, which
is why this module (and not :mod:`roost.state.panestate`) writes that one option.
"""

from __future__ import annotations

import os

from roost import paths

SESSION_ID = "ROOST_SESSION_ID"
REPORTS = "ROOST_REPORTS"
PANE_SESSION = "@roost-pane-session"
REPORTS_SOCKET = "reports.sock"
"""The reports socket's name in the runtime directory; the daemon listens there too."""


def reports_endpoint() -> str:
    """Where rosterd listens for reports, as the process that opens the pane sees it."""
    return os.path.join(paths.runtime_path(), REPORTS_SOCKET)


def fresh_id() -> str:
    """A session id no other pane has had: 128 random bits, so nobody can guess another pane's."""
    return os.urandom(16).hex()


def env_args(session_id: str) -> list[str]:
    """The ``-e`` arguments that give a new pane its id and the reports endpoint."""
    return ["-e", f"{SESSION_ID}={session_id}", "-e", f"{REPORTS}={reports_endpoint()}"]
