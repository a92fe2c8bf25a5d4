"""``rosterd daemon [--config PATH]``: run the daemon in the foreground until signalled.

A service manager (systemd user unit, LaunchAgent) runs this; it logs to stderr and exits 0
on SIGTERM or SIGINT, 1 when its config, secrets or listeners are unusable.
"""

from __future__ import annotations

from pathlib import Path

from roost.base.errors import UsageError

USAGE = (("daemon [--config PATH]", "run the daemon in the foreground"),)
_USAGE = "usage: rosterd daemon [--config PATH]"


def _config_path(args: list[str]) -> Path | None:
    path: Path | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--config" and rest:
            path = Path(rest.pop(0))
        elif arg.startswith("--config="):
            path = Path(arg.partition("=")[2])
        else:
            raise UsageError(_USAGE)
        if not str(path):
            raise UsageError(_USAGE)
    return path


def run(args: list[str]) -> int:
    path = _config_path(args)
    from roost.daemon import config
    from roost.daemon.main import run_daemon

    return run_daemon(config.load(path))
