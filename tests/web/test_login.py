"""Logging in with the link, the session cookie, and who the gate lets through.

Over real HTTP to a real daemon; the WebSocket half of the gate is in test_terminal_ws.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.daemon.fixture import Daemon
from tests.web.conftest import Web

FALLBACK_RUNTIME = f"/tmp/roost-{os.getuid()}"
"""Where the daemon keeps its sockets when no ``XDG_RUNTIME_DIR`` is set (``roost.base.paths``)."""


def test_the_printed_link_logs_in_once(web: Web) -> None:
    link = web.printed_link().removeprefix(web.origin)
    with web.client() as client:
        first = client.get(link)
        assert first.status_code == 303
        assert first.headers["location"] == "/"
        set_cookie = first.headers["set-cookie"]
        assert set_cookie.startswith(f"{web.cookie_name}=")
        for attribute in ("HttpOnly", "SameSite=strict", "Path=/", "Max-Age="):
            assert attribute.lower() in set_cookie.lower()
        cookie = first.cookies[web.cookie_name]
    with web.client() as client:
        again = client.get(link)
    assert again.status_code == 401
    assert "set-cookie" not in again.headers
    assert "used already" in again.text
    with web.client() as client:
        page = client.get("/", headers={"Cookie": f"{web.cookie_name}={cookie}"})
    assert page.status_code == 200
    assert '<script type="module" src="/static/app.js">' in page.text


def test_an_unknown_token_is_refused(web: Web) -> None:
    with web.client() as client:
        response = client.get("/login?token=not-a-token")
    assert response.status_code == 401
    assert "set-cookie" not in response.headers


def test_a_minted_link_works_once_and_the_printed_one_still_works(web: Web) -> None:
    minted = web.new_link().removeprefix(web.origin)
    with web.client() as client:
        assert client.get(minted).status_code == 303
        assert client.get(minted).status_code == 401
        assert client.get(web.printed_link().removeprefix(web.origin)).status_code == 303


def test_minting_a_link_needs_the_bearer_on_tcp(web: Web) -> None:
    with web.client() as client:
        assert client.post("/login-link").status_code == 401
        with_token = client.post("/login-link", headers={"Authorization": f"Bearer {web.daemon.token}"})
    assert with_token.status_code == 200
    assert with_token.json()["url"].startswith(f"{web.origin}/login?token=")


def test_without_a_cookie_the_api_is_401_and_the_page_sends_you_to_log_in(web: Web) -> None:
    with web.client() as client:
        for path in ("/snapshot", "/terminals", "/changes", "/status"):
            assert client.get(path).status_code == 401, path
        page = client.get("/")
        assert page.status_code == 303
        assert page.headers["location"] == "/login"
        login = client.get("/login")
    assert login.status_code == 200
    assert "Log in with the link" in login.text


def test_a_cookie_reads_the_api(web: Web) -> None:
    headers = web.cookie_header()
    with web.client() as client:
        assert client.get("/snapshot", headers=headers).json()["schema"] == "rosterd.snapshot.v1"
        listing = client.get("/terminals", headers=headers).json()
    assert listing["socket"] == web.roost.socket


@pytest.mark.parametrize("value", ["", "v1.9999999999.x.0000", "garbage", "v1.1.nonce.sig"])
def test_a_forged_or_expired_cookie_is_not_a_login(web: Web, value: str) -> None:
    with web.client() as client:
        response = client.get("/snapshot", headers={"Cookie": f"{web.cookie_name}={value}"})
    assert response.status_code == 401


def test_a_cookie_signed_for_another_port_is_ignored(web: Web) -> None:
    with web.client() as client:
        response = client.get("/snapshot", headers={"Cookie": f"roost_session_1={web.cookie()}"})
    assert response.status_code == 401


def test_state_changing_requests_check_the_origin(web: Web) -> None:
    cookie = web.cookie_header()
    body = {"activity": "working"}
    with web.client() as client:
        foreign = client.post("/claim", json=body, headers={**cookie, "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert foreign.json() == {"error": "the Origin 'http://evil.example' is not this daemon's"}
        missing = client.post("/claim", json=body, headers=cookie)
        assert missing.status_code == 403
        assert missing.json() == {"error": "this request needs an Origin header"}
        # The daemon's own origin passes the gate (the claim itself is then judged: 400 here).
        own = client.post("/claim", json=body, headers={**cookie, "Origin": web.origin})
        assert own.status_code == 400
        bearer = {"Authorization": f"Bearer {web.daemon.token}"}
        assert client.post("/claim", json=body, headers=bearer).status_code == 400
        assert (
            client.post("/claim", json=body, headers={**bearer, "Origin": "http://evil.example"}).status_code
            == 403
        )


def test_static_files_are_public_and_vendored(web: Web) -> None:
    with web.client() as client:
        for path in ("/static/app.js", "/static/style.css", "/static/vendor/xterm/xterm.mjs"):
            response = client.get(path)
            assert response.status_code == 200, path
        assert client.get("/static/vendor/xterm/VERSION").text.strip() == "@xterm/xterm@6.0.0"
        # A way out of the static folder finds nothing, however it is spelt.
        assert client.get("/static/%2e%2e/api/app.py").status_code == 404
        assert client.get("/static/../api/app.py").status_code == 401


def new_link_command(page: str) -> str:
    return page.split("<pre>", 1)[1].split("</pre>", 1)[0]


def test_the_login_page_asks_for_a_new_link_on_the_daemons_own_socket(web: Web) -> None:
    with web.client() as client:
        page = client.get("/login").text
    assert new_link_command(page) == (
        f"curl -s --unix-socket {web.daemon.socket} -X POST http://rosterd/login-link"
    )


@dataclass
class Unplaced(Daemon):
    """A daemon started with no ``XDG_RUNTIME_DIR``, so it keeps its sockets in /tmp/roost-UID:
    in a user and mount namespace of its own, where that directory is this test's ``runtime``,
    so another roost's files there are neither seen nor touched."""

    @property
    def env(self) -> dict[str, str]:
        return {k: v for k, v in super().env.items() if k != "XDG_RUNTIME_DIR"}

    @property
    def socket(self) -> Path:
        return self.runtime / "rosterd.sock"

    def command(self, *args: str) -> list[str]:
        bind = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
        as_me = ["unshare", "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}"]
        inside = ["sh", "-c", bind, "sh", str(self.runtime), FALLBACK_RUNTIME, *as_me]
        return ["unshare", "--user", "--map-root-user", "--mount", *inside, *super().command(*args)]


@pytest.fixture
def unplaced(daemon: Daemon) -> Iterator[Unplaced]:
    made = not os.path.lexists(FALLBACK_RUNTIME)  # the mount needs a directory to cover
    os.makedirs(FALLBACK_RUNTIME, mode=0o700, exist_ok=True)
    found = Unplaced(daemon.roost, daemon.runtime, daemon.port)
    yield found
    if found.proc is not None:
        found.stop()
    if made:
        os.rmdir(FALLBACK_RUNTIME)


def test_without_xdg_runtime_dir_the_login_page_names_the_socket_in_tmp(unplaced: Unplaced) -> None:
    unplaced.start()
    with unplaced.tcp() as client:
        page = client.get("/login").text
    assert new_link_command(page) == (
        f"curl -s --unix-socket {FALLBACK_RUNTIME}/rosterd.sock -X POST http://rosterd/login-link"
    )
