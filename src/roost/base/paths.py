"""Where roost keeps things, each place movable by an environment variable.

Tests isolate themselves by setting these variables, so nothing here caches: every
function reads the environment when it is called.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
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
    """A private directory for the daemon's sockets and lock: ``$XDG_RUNTIME_DIR/roost`` or
    ``/tmp/roost-UID``. Its files are named once, below."""
    return _path(runtime_path())


def runtime_path() -> str:
    """``runtime_dir()`` as a string (created if missing), for the hook."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = os.path.join(base, "roost") if base else f"/tmp/roost-{os.getuid()}"
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


API_SOCKET = "rosterd.sock"
"""The daemon's HTTP API socket (mode 0600), in the runtime directory."""
API_SOCKET_ENV = "ROSTERD_SOCKET"
"""Moves the API socket anywhere; the runner puts it in every harness's environment."""
REPORTS_SOCKET = "reports.sock"
"""Where agents' own integrations report their lifecycle, in the runtime directory."""
DAEMON_LOCK = "rosterd.lock"
"""Held (flock) by the one running daemon; the kernel releases it however the daemon dies."""
TAPS = "taps"
"""The directory of FIFOs through which tmux pipes viewed panes' output to the daemon."""
HEADLESS = "headless"
"""One file per headless session in the state directory: what brings it back after a reboot."""
NAMES = "names.json"
"""The names people gave interactive sessions, in the state directory: a restart keeps them."""
HOLDERS = "holders"
"""One ``KEY.sock`` (mode 0600) and one ``KEY.json`` state file per headless session's holder."""
LEDGER = "ledger"
"""The journal and usage files, in the state directory (``$ROOST_LEDGER`` moves them)."""
LEDGER_ENV = "ROOST_LEDGER"
HOLDER_LINE_LIMIT = 64 * 1024 * 1024
"""The longest line either end of a holder's socket (and its adapter's stdio) takes: an ACP
message with a large diff is megabytes."""
HOLDER_MARK_ENV = "ROSTERD_HOLDER"
"""Set to the holder's key in its adapter's environment (and so its tools'): a process can be
ended as a dead holder's leftover only when it carries this mark itself."""


def api_socket() -> Path:
    return _path(api_socket_path())


def api_socket_path() -> str:
    """``api_socket()`` as a string, for the hook and the CLIs: ``$ROSTERD_SOCKET``, else
    ``rosterd.sock`` in the runtime directory."""
    return os.environ.get(API_SOCKET_ENV) or os.path.join(runtime_path(), API_SOCKET)


def reports_socket() -> Path:
    return _path(reports_socket_path())


def reports_socket_path() -> str:
    """``reports_socket()`` as a string, for the environment of a new pane."""
    return os.path.join(runtime_path(), REPORTS_SOCKET)


def daemon_lock() -> Path:
    return runtime_dir() / DAEMON_LOCK


def taps_dir() -> Path:
    return runtime_dir() / TAPS


def holders_dir() -> Path:
    return runtime_dir() / HOLDERS


def holder_socket(key: str) -> Path:
    return holders_dir() / f"{key}.sock"


def holder_state(key: str) -> Path:
    return holders_dir() / f"{key}.json"


def headless_dir() -> Path:
    """What the runner keeps of each headless session, where a reboot leaves it."""
    return state_home() / HEADLESS


def given_names() -> Path:
    """The names people gave sessions the runner does not keep (``roost.actions.names``)."""
    return state_home() / NAMES


def ledger_dir() -> Path:
    """Where the journal and the usage ledger are kept: ``$ROOST_LEDGER``, else ``ledger/``
    in the state directory."""
    return _path(os.environ.get(LEDGER_ENV) or str(state_home() / LEDGER))


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
    value = events_path()
    return _path(value) if value is not None else None


def events_path() -> str | None:
    """``events_dir()`` as a string, for the hook and the verbs that append to the log."""
    value = os.environ.get("ROOST_EVENTS")
    if value is not None:
        return value or None
    records = record_path()
    return os.path.join(records, "events") if records is not None else None


def events_keep() -> int:
    try:
        return max(1, int(os.environ.get("ROOST_EVENTS_KEEP", "5000")))
    except ValueError:
        return 5000


def private_mkdir(path: str | PathLike[str]) -> None:
    """Create ``path`` (and any missing parent) readable by the owner alone.

    ``mkdir(parents=True)`` would give the parents the umask's mode; kept replies and the
    events log are private all the way down. Written with ``os.path``: the hook makes the
    events log's directory, and importing pathlib would cost it ~10 ms on every event.
    """
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        private_mkdir(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
