"""The daemon as a per-user service: a systemd user unit on Linux, a LaunchAgent on macOS.

Boundaries, as sentences:

- What a unit says is a pure function of this installation and of the environment it is
  installed from (:func:`roost.services.autostart.systemd.unit`,
  :func:`roost.services.autostart.launchd.plist`), so
  installing twice writes the same bytes once and says "unchanged".
- Only the files install writes (the unit, and a socket unit beside it) are ever changed or
  removed, and only while they carry roost's mark; a file of someone else's at such a path is
  named and left alone.
- Where no service manager answers (a container, CI), the file is still written and nothing
  pretends that it runs: the caller is told so, and how to start it by hand.
- The platform is chosen once, by :func:`manager`, from ``sys.platform``.

    from roost.services.autostart import install, manager
    install(manager())    # -> lines saying what changed
"""

from __future__ import annotations

import sys

from roost.base.errors import SetupError
from roost.services.autostart.common import Manager, NotStarted, Status, install, status, uninstall

__all__ = ["Manager", "NotStarted", "Status", "install", "manager", "status", "uninstall"]


def manager(platform: str | None = None, hook_port: int = 0) -> Manager:
    """The service manager of this platform (``sys.platform`` unless ``platform`` is given);
    ``hook_port`` is the port a socket unit holds for the daemon's hook port, where the
    platform's manager can (0: none)."""
    platform = platform or sys.platform
    if platform == "darwin":
        from roost.services.autostart.launchd import Launchd

        return Launchd()
    if platform.startswith("linux"):
        from roost.services.autostart.systemd import Systemd

        return Systemd(hook_port)
    raise SetupError(f"roost has no service unit for {platform}: run `rosterd daemon` yourself")
