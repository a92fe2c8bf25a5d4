"""The one client of the daemon's socket (``roost.base.unixhttp``), against a stand-in that answers
with exactly the bytes a test gives it: every framing the daemon uses, and the ways a
connection breaks that callers tell apart."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from roost.base.unixhttp import HANGUP, Connection, ProtocolError


@contextmanager
def answering(path: Path, *answer: bytes, pause: float = 0.0) -> Iterator[list[bytes]]:
    """A socket at ``path`` that takes one request (kept in the list yielded), then sends each
    of ``answer`` in turn, ``pause`` seconds apart, and closes."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    heard: list[bytes] = []

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            heard.append(request)
            for part in answer:
                time.sleep(pause)
                try:
                    connection.sendall(part)
                except OSError:  # the client gave up waiting: what the test is about
                    return

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield heard
    finally:
        server.join(5)
        listener.close()


def exchange(path: Path, body: bytes | None = b'{"a": 1}', timeout: float = 5.0) -> tuple[int, str, bytes]:
    with Connection(str(path), timeout) as connection:
        connection.connect()
        connection.send("POST", "/claim", body, {"Content-Type": "application/json"})
        answer = connection.response()
        return answer.status, answer.header("Content-Type"), answer.read()


def test_a_request_says_what_the_daemon_reads_and_a_sized_answer_is_read_whole(tmp_path: Path) -> None:
    where = tmp_path / "d.sock"
    with answering(
        where,
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
        b"Content-Length: 7\r\n\r\n{",
        b'"b":2}',
    ) as heard:
        assert exchange(where) == (200, "application/json", b'{"b":2}')
    assert heard == [
        b"POST /claim HTTP/1.1\r\nHost: rosterd\r\nContent-Type: application/json\r\n"
        b'Content-Length: 8\r\nConnection: close\r\n\r\n{"a": 1}'
    ]


def test_a_chunked_stream_is_read_line_by_line_across_its_chunks(tmp_path: Path) -> None:
    where = tmp_path / "d.sock"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = (b"6\r\nid: 1\n\r\n", b"4;x=y\r\ndata\r\n", b"3\r\n: 2\r\n", b"2\r\n\n\n\r\n0\r\n\r\n")
    with answering(where, head, *chunks, pause=0.01), Connection(str(where), 5.0) as connection:
        connection.connect()
        connection.send("GET", "/changes")
        answer = connection.response()
        lines = iter(answer.readline, b"")
        assert list(lines) == [b"id: 1\n", b"data: 2\n", b"\n"]


def test_an_answer_without_a_length_ends_with_the_connection(tmp_path: Path) -> None:
    where = tmp_path / "d.sock"
    with answering(where, b"HTTP/1.1 502 Bad Gateway\r\n\r\nno ", b"upstream"):
        assert exchange(where, None) == (502, "", b"no upstream")


def test_a_daemon_that_hangs_up_unanswered_says_so_in_the_words_the_clis_print(tmp_path: Path) -> None:
    where = tmp_path / "d.sock"
    with answering(where), pytest.raises(ConnectionError, match=f"^{HANGUP}$"):
        exchange(where)


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
    ],
)
def test_what_is_not_an_http_answer_is_a_protocol_error(tmp_path: Path, answer: bytes) -> None:
    where = tmp_path / "d.sock"
    with answering(where, answer), pytest.raises(ProtocolError):
        exchange(where)


def test_a_body_over_the_limit_is_refused(tmp_path: Path) -> None:
    where = tmp_path / "d.sock"
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789x"
    with answering(where, answer), Connection(str(where), 5.0) as connection:
        connection.connect()
        connection.send("POST", "/gate", b"{}")
        with pytest.raises(ProtocolError, match="longer than 10 bytes"):
            connection.response().read(10)


def test_the_deadline_bounds_the_whole_exchange(tmp_path: Path) -> None:
    """The hook's 250 ms: a daemon that accepts and answers slowly costs no more than that."""
    where = tmp_path / "d.sock"
    with answering(where, b"HTTP/1.1 200 OK\r\n", b"Content-Length: 0\r\n\r\n", pause=0.5):
        began = time.monotonic()
        with Connection(str(where), deadline=began + 0.25) as connection:
            connection.connect()
            connection.send("POST", "/claim", b"{}")
            with pytest.raises(TimeoutError):
                connection.response()
        assert time.monotonic() - began < 0.45


def test_nobody_listening_fails_to_connect(tmp_path: Path) -> None:
    with Connection(str(tmp_path / "none.sock"), 1.0) as connection, pytest.raises(FileNotFoundError):
        connection.connect()


@pytest.mark.parametrize("target", ["/a b", "/a\r\nX-Evil: 1", "/é"])
def test_a_target_that_would_break_the_head_is_never_sent(tmp_path: Path, target: str) -> None:
    where = tmp_path / "d.sock"
    with (
        answering(where, b"HTTP/1.1 204 No Content\r\n\r\n") as heard,
        Connection(str(where), 5.0) as connection,
    ):
        connection.connect()
        with pytest.raises(ProtocolError, match="not a request to send"):
            connection.send("GET", target)
        connection.send("GET", "/fine")
        assert connection.response().read() == b""
    assert heard[0].startswith(b"GET /fine HTTP/1.1\r\n")
