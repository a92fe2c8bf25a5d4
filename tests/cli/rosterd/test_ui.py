"""``rosterd ui`` and ``rosterd open KEY``: a fresh one-time login link, printed and handed to
the browser (``$BROWSER``, here a script that records what it was given); ``open`` lands on
the session, and a wrong KEY fails before any browser is started."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.cli.rosterd.helpers import badged, fails, rosterd, session_of
from tests.conftest import Roost
from tests.daemon.fixture import Daemon


def fake_browser(tmp_path: Path) -> tuple[dict[str, str], Path]:
    seen = tmp_path / "browser.log"
    script = tmp_path / "browser"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {seen}\n')
    script.chmod(0o755)
    return {"BROWSER": str(script), "DISPLAY": ""}, seen


def opened(daemon: Daemon, *args: str, env: dict[str, str], seen: Path) -> str:
    proc = rosterd(daemon, *args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    url = proc.stdout.decode().strip()
    daemon.wait_for(lambda: seen.exists() and seen.read_text().strip(), 10, "the browser to be started")
    assert seen.read_text().strip().splitlines()[-1] == url
    return url


def landing(daemon: Daemon, url: str) -> httpx.Response:
    """Follow the login link once, as the browser would, without following its redirect."""
    parts = urlsplit(url)
    local = f"http://127.0.0.1:{daemon.port}{parts.path}?{parts.query}"
    return httpx.get(local, headers={"Origin": f"http://127.0.0.1:{daemon.port}"}, follow_redirects=False)


def test_ui_prints_a_working_one_time_link_and_opens_it(running: Daemon, tmp_path: Path) -> None:
    env, seen = fake_browser(tmp_path)
    url = opened(running, "ui", env=env, seen=seen)
    first = landing(running, url)
    assert first.status_code == 303 and first.headers["location"] == "/"
    assert "httponly" in first.headers["set-cookie"].lower()
    assert landing(running, url).status_code == 401  # single use


def test_open_lands_on_the_session(roost: Roost, running: Daemon, tmp_path: Path) -> None:
    pane = badged(roost, "working", session="opening")
    key = session_of(running, pane)["session_key"]
    env, seen = fake_browser(tmp_path)
    url = opened(running, "open", str(session_of(running, pane)["pid"]), env=env, seen=seen)
    response = landing(running, url)
    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert (location.path, parse_qs(location.query)) == ("/", {"open": [key]})


def test_open_with_an_unknown_key_fails_before_any_browser(running: Daemon, tmp_path: Path) -> None:
    env, seen = fake_browser(tmp_path)
    proc = rosterd(running, "open", "no-such-session", env=env)
    assert proc.returncode == 1 and proc.stdout == b""
    assert not seen.exists()
    fails(running, 1, "open")
    fails(running, 1, "ui", "extra")


def test_a_login_link_never_redirects_elsewhere(running: Daemon, tmp_path: Path) -> None:
    env, seen = fake_browser(tmp_path)
    url = opened(running, "ui", env=env, seen=seen)
    response = landing(running, url + "&open=" + "https://evil.example/")
    assert response.status_code == 303 and response.headers["location"] == "/"
