"""Who may call: TCP needs the loopback bearer token; unix-socket peers need nothing."""

from __future__ import annotations

import pytest

from tests.api.helpers import about, sleeper
from tests.api.sse import Events
from tests.daemon.fixture import Daemon

READS = ("/snapshot", "/status", "/openapi.json", "/sessions/nope", "/sessions/nope/explain")


@pytest.mark.parametrize("path", READS)
def test_tcp_without_a_bearer_is_401(running: Daemon, path: str) -> None:
    with running.tcp() as client:
        response = client.get(path)
    assert response.status_code == 401
    assert response.json() == {"error": "a bearer token is required (see loopback.token beside rosterd.toml)"}
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header", ["Bearer wrong", "Bearer", "Basic dXNlcjpwYXNz", "bearer{token}x", "Token {token}"]
)
def test_tcp_with_a_wrong_bearer_is_401(running: Daemon, header: str) -> None:
    with running.tcp() as client:
        response = client.get("/snapshot", headers={"Authorization": header.format(token=running.token)})
    assert response.status_code == 401
    assert response.json() == {"error": "the bearer token is wrong"}


def test_tcp_with_the_token_works_for_reads_and_claims(running: Daemon) -> None:
    with running.tcp(running.token) as client, sleeper() as proc:
        assert client.get("/snapshot").status_code == 200
        assert client.get("/status").status_code == 200
        response = client.post("/claim", json=about(proc, activity="working"))
        assert response.status_code == 200, response.text
        assert client.get(f"/sessions/{response.json()['session_key']}").status_code == 200


def test_the_scheme_is_case_insensitive(running: Daemon) -> None:
    with running.tcp() as client:
        assert client.get("/status", headers={"Authorization": f"bearer {running.token}"}).status_code == 200


def test_unix_socket_needs_no_token(running: Daemon) -> None:
    with running.unix() as client:
        assert client.get("/snapshot").status_code == 200
        assert client.get("/status").status_code == 200


def test_posts_without_a_token_change_nothing(running: Daemon) -> None:
    with running.tcp() as client, sleeper() as proc:
        response = client.post("/claim", json=about(proc, activity="working"))
        assert response.status_code == 401
    assert running.get("/status")["seq"] == running.get("/snapshot")["seq"]
    assert running.record_where(lambda r: r["pid"] == proc.pid) is None


def test_streams_need_the_token_on_tcp(running: Daemon) -> None:
    with Events(running.tcp(), "/changes") as stream:
        assert stream.status == 401
        assert stream.ended()
    with Events(running.tcp(running.token), "/changes") as stream:
        assert stream.status == 200
        assert stream.next().name == "snapshot"
