"""One client for the daemon's socket under both CLIs (``roost.faces.cli.daemonclient``): each face
meets the same failures on the same socket and says them in its own words, with its own exit
codes, exactly as each always has."""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.cli.rosterd.helpers import rosterd
from tests.conftest import Roost
from tests.daemon import fixture
from tests.daemon.fixture import Daemon

daemon, running = fixture.daemon, fixture.running  # the real daemon fixtures, for these tests
START = "start it with `rosterd daemon`"


def both(roost: Roost, daemon: Daemon, env: dict[str, str] | None = None) -> tuple[tuple[int, str], ...]:
    """(exit status, stderr) of ``roost api agents`` and of ``rosterd list``; neither prints."""
    env = {"XDG_RUNTIME_DIR": str(daemon.runtime), **(env or {})}
    api = roost.run("api", "agents", env=env)
    listing = rosterd(daemon, "list", env=env)
    assert (api.stdout, listing.stdout) == ("", b"")
    return (api.returncode, api.stderr), (listing.returncode, listing.stderr.decode())


@contextmanager
def fake_daemon(path: Path, answer: Callable[[socket.socket], None]) -> Iterator[None]:
    """A unix socket at ``path`` whose every connection gets ``answer``: a stand-in for a
    daemon that breaks in a way a real one can only be made to by chance."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                answer(connection)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        server.join(5)


def test_no_socket_is_exit_2_from_both_each_in_its_words(roost: Roost, daemon: Daemon) -> None:
    where = daemon.socket
    assert both(roost, daemon) == (
        (2, f"roost api: rosterd is not running: no socket at {where} ({START})\n"),
        (2, f"rosterd list: the daemon is not reachable: no socket at {where}; {START}\n"),
    )


def test_a_socket_left_by_a_killed_daemon_is_exit_2_from_both(roost: Roost, running: Daemon) -> None:
    assert running.stop(signal.SIGKILL) == -signal.SIGKILL
    where = running.socket
    assert both(roost, running) == (
        (2, f"roost api: rosterd is not running: {where} refuses connections ({START})\n"),
        (
            2,
            f"rosterd list: the daemon is not reachable: {where} refuses connections "
            f"(left behind by a daemon that died); {START}\n",
        ),
    )


def test_a_daemon_that_hangs_up_unanswered_is_exit_2_from_both(
    roost: Roost, daemon: Daemon, tmp_path: Path
) -> None:
    """The request went out and no answer came: ``roost api`` says so (for a prompt that is its
    exit 4, "never send it again"); ``rosterd`` calls it unreachable."""
    where = tmp_path / "hangs-up.sock"

    def hang_up(connection: socket.socket) -> None:
        connection.recv(65536)

    with fake_daemon(where, hang_up):
        gone = "Remote end closed connection without response"
        assert both(roost, daemon, {"ROSTERD_SOCKET": str(where)}) == (
            (2, f"roost api: rosterd did not answer on {where}: {gone}\n"),
            (2, f"rosterd list: the daemon is not reachable: the connection on {where} failed: {gone}\n"),
        )


def test_an_error_answer_that_is_not_json_is_a_refusal_from_both(
    roost: Roost, daemon: Daemon, tmp_path: Path
) -> None:
    where = tmp_path / "proxy.sock"

    def bad_gateway(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 12\r\n\r\nno upstream\n")

    with fake_daemon(where, bad_gateway):
        assert both(roost, daemon, {"ROSTERD_SOCKET": str(where)}) == (
            (2, "roost api: rosterd answered 502 without JSON\n"),
            (1, "rosterd list: no upstream\n"),
        )


def test_the_daemon_refusing_a_session_keeps_each_faces_exit_code(roost: Roost, running: Daemon) -> None:
    env = {"XDG_RUNTIME_DIR": str(running.runtime)}
    api = roost.run("api", "agent-status", "nope", env=env)
    read = rosterd(running, "read", "nope")
    assert (api.returncode, api.stdout, api.stderr) == (2, "", "roost api: no session 'nope'\n")
    assert (read.returncode, read.stdout, read.stderr) == (1, b"", b"rosterd read: no session 'nope'\n")


def test_a_moved_socket_is_where_both_look(roost: Roost, running: Daemon, tmp_path: Path) -> None:
    elsewhere = {"XDG_RUNTIME_DIR": str(tmp_path / "elsewhere"), "ROSTERD_SOCKET": str(running.socket)}
    api = roost.run("api", "agents", env=elsewhere)
    listing = rosterd(running, "list", env=elsewhere)
    assert (api.returncode, api.stderr, listing.returncode, listing.stderr) == (0, "", 0, b"")


def test_one_mapping_turns_each_status_back_into_its_failure() -> None:
    """The daemon's status as the failure of the table, for every client of the socket: ``roost
    api`` exits with each one's code; ``rosterd`` exits 1 on any, 3 on ``peer_unreachable``."""
    from roost.base import errors
    from roost.faces.cli.daemonclient import Refused

    expected = {
        400: errors.UsageError,
        401: errors.Unauthorized,
        404: errors.TargetGone,
        409: errors.Conflict,
        413: errors.TooLarge,
        422: errors.Conflict,
        429: errors.TooMany,
        500: errors.Unavailable,
        502: errors.Unavailable,
    }
    for status, failure in expected.items():
        found = Refused(status, b'{"error": "said"}').failure()
        assert (type(found), found.message) == (failure, "said"), status
    unreachable = Refused(502, b'{"error": "gone", "code": "peer_unreachable"}')
    assert unreachable.exit_code == errors.PeerUnreachable.exit_code
    assert Refused(404, b"{}").failure("no session 'x'").message == "no session 'x'"
