"""Exit 2: the daemon is unreachable. Every verb that needs it says so, naming the socket."""

from __future__ import annotations

import json
import signal

from tests.cli.rosterd.helpers import rosterd
from tests.daemon.fixture import Daemon

NEEDS_THE_DAEMON = [
    ("list",),
    ("list", "--json"),
    ("watch",),
    ("watch", "--json"),
    ("changes",),
    ("changes", "--json", "--since", "3"),
    ("status",),
    ("status", "--json"),
    ("read", "KEY"),
    ("explain", "KEY", "--json"),
    ("name", "KEY", "LABEL"),
    ("name", "KEY", "--clear"),
]


def unreachable(daemon: Daemon, why: str, env: dict[str, str] | None = None) -> None:
    for args in NEEDS_THE_DAEMON:
        proc = rosterd(daemon, *args, env=env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == b""
        assert proc.stderr.decode() == f"rosterd {args[0]}: the daemon is not reachable: {why}\n", args


def test_no_daemon_is_exit_2_naming_the_missing_socket(daemon: Daemon) -> None:
    unreachable(daemon, f"no socket at {daemon.socket}; start it with `rosterd daemon`")


def test_a_socket_left_by_a_killed_daemon_is_exit_2_refused(running: Daemon) -> None:
    assert running.stop(signal.SIGKILL) == -signal.SIGKILL
    assert running.socket.exists()
    unreachable(
        running,
        f"{running.socket} refuses connections (left behind by a daemon that died); "
        "start it with `rosterd daemon`",
    )


def test_rosterd_socket_moves_where_the_cli_looks(running: Daemon, tmp_path) -> None:
    elsewhere = {"XDG_RUNTIME_DIR": str(tmp_path / "elsewhere"), "ROSTERD_SOCKET": str(running.socket)}
    proc = rosterd(running, "status", "--json", env=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["listen"]["unix"] == str(running.socket)
    missing = str(tmp_path / "no.sock")
    unreachable(
        running, f"no socket at {missing}; start it with `rosterd daemon`", {"ROSTERD_SOCKET": missing}
    )
