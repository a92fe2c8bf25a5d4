"""Where roost keeps things, each place movable by an environment variable.

Tests isolate themselves by setting these variables, so nothing here caches: every
function reads the environment when it is called.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _path(*parts: str) -> Path:
    # pathlib is imported on first use: the hook gets by on ``config_dir`` and
    # ``runtime_path``, and importing pathlib would cost it ~3 ms on every event.
    from pathlib import Path

    return Path(*parts)


def _xdg(var: str, fallback: str) -> str:
    value = os.environ.get(var)
    if value:
        return value
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")  # as Path.home() says it
    return os.path.join(home, fallback)


def state_home() -> Path:
    return _path(_xdg("XDG_STATE_HOME", ".local/state"), "roost")


def config_home() -> Path:
    return _path(config_dir())


def config_dir() -> str:
    """``config_home()`` as a string, for the hook."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "roost")


def runtime_dir() -> Path:
    """A private directory for sockets and locks: ``$XDG_RUNTIME_DIR/roost`` or ``/tmp``."""
    return _path(runtime_path())


def runtime_path() -> str:
    """``runtime_dir()`` as a string (created if missing), for the hook."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = os.path.join(base, "roost") if base else f"/tmp/roost-{os.getuid()}"
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def record_dir() -> Path | None:
    """The kept-replies directory, or None when ``ROOST_RECORD_DIR`` is set to empty."""
    value = record_path()
    return _path(value) if value is not None else None


def record_path() -> str | None:
    """``record_dir()`` as a string, for ``roost read`` and the hook."""
    value = os.environ.get("ROOST_RECORD_DIR")
    if value is None:
        return os.path.join(_xdg("XDG_STATE_HOME", ".local/state"), "roost", "panes")
    return value or None


def events_dir() -> Path | None:
    """The events log directory, or None when the log is off.

    ``ROOST_EVENTS`` wins when set (empty turns the log off); otherwise the log lives in
    ``events/`` inside the kept-replies directory and is off whenever kept replies are off.
    """
    value = os.environ.get("ROOST_EVENTS")
    if value is not None:
        return _path(value) if value else None
    records = record_dir()
    return records / "events" if records is not None else None


def events_keep() -> int:
    try:
        return max(1, int(os.environ.get("ROOST_EVENTS_KEEP", "5000")))
    except ValueError:
        return 5000


def private_mkdir(path: Path) -> Path:
    """Create ``path`` (and any missing parent) readable by the owner alone.

    ``mkdir(parents=True)`` would give the parents the umask's mode; kept replies and the
    events log are private all the way down.
    """
    if not path.is_dir():
        if not path.parent.is_dir():
            private_mkdir(path.parent)
        path.mkdir(mode=0o700, exist_ok=True)
    return path
