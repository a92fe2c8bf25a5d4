"""Where the running daemon can be reached: its sockets and its lock, under the runtime dir.

Import-light on purpose: the hook and the CLI find the daemon with it. ``ROSTERD_SOCKET``
moves the API socket (the runner puts it in every harness's environment); everything else
follows ``XDG_RUNTIME_DIR`` through :func:`roost.paths.runtime_dir`.
"""

from __future__ import annotations

import os
from pathlib import Path

from roost import paths

API_SOCKET = "rosterd.sock"
REPORTS_SOCKET = "reports.sock"
LOCK = "rosterd.lock"
TAPS = "taps"
ENV = "ROSTERD_SOCKET"


def api_socket() -> Path:
    """The HTTP API's unix socket (mode 0600)."""
    moved = os.environ.get(ENV)
    return Path(moved) if moved else paths.runtime_dir() / API_SOCKET


def reports_socket() -> Path:
    """Where agents' own integrations report their lifecycle."""
    return paths.runtime_dir() / REPORTS_SOCKET


def lock_file() -> Path:
    """Held (flock) by the one running daemon; the kernel releases it however the daemon dies."""
    return paths.runtime_dir() / LOCK


def taps_dir() -> Path:
    """The FIFOs through which tmux pipes viewed panes' output to the daemon (mode 0700)."""
    return paths.runtime_dir() / TAPS
