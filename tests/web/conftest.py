"""The web face against a real daemon: logging in, the terminal WebSocket, and a real browser.

``web`` is a running daemon (see :mod:`tests.daemon.fixture`) with helpers to log in the way
a browser does; ``chromium`` is Debian's Chromium driven by Playwright (never a downloaded
browser), started once per module, each test in its own fresh context (its own cookies).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import BOOTSTRAP, Roost
from tests.daemon.fixture import Daemon, daemon, running
from tests.nodes import IP

__all__ = ["daemon", "running"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LINK = re.compile(r"rosterd: web app login \(works once\): (http://\S+)")


@contextlib.contextmanager
def chromium_in(namespace: str, folder: Path) -> Iterator[Any]:
    """Chromium in a node's network namespace, where that node's loopback listener (its web
    app) is: Playwright starts a wrapper, written to ``folder``, that enters it first."""
    sync_api = importlib.import_module("playwright.sync_api")
    wrapper = folder / f"chromium-in-{namespace}"
    wrapper.write_text(f'#!/bin/sh\nexec {IP} netns exec {namespace} {CHROMIUM} "$@"\n')
    wrapper.chmod(0o755)
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(wrapper), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Web:
    """A running daemon seen from a browser's side."""

    daemon: Daemon
    roost: Roost

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.daemon.port}"

    @property
    def cookie_name(self) -> str:
        return f"roost_session_{self.daemon.port}"

    def printed_link(self) -> str:
        """The login link the daemon printed on stderr at start."""
        links = LINK.findall(self.daemon.log.read_text())
        assert links, self.daemon.log.read_text()
        return links[-1]

    def new_link(self) -> str:
        """A fresh one-time link, asked for over the unix socket."""
        with self.daemon.unix() as client:
            response = client.post("/login-link")
        assert response.status_code == 200, response.text
        return str(response.json()["url"])

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.origin, timeout=10, follow_redirects=False)

    def cookie(self) -> str:
        """A session cookie value, got by opening a login link."""
        with self.client() as client:
            response = client.get(self.new_link().removeprefix(self.origin))
        assert response.status_code == 303, response.text
        value = response.cookies.get(self.cookie_name)
        assert value
        return value

    def cookie_header(self) -> dict[str, str]:
        return {"Cookie": f"{self.cookie_name}={self.cookie()}"}


@pytest.fixture
def web(running: Daemon, roost: Roost) -> Web:
    return Web(running, roost)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Fails, rather than skips, on a machine without Playwright or Chromium."""
    try:
        sync_api = importlib.import_module("playwright.sync_api")
    except ImportError:
        pytest.fail(f"the browser tier needs Playwright, which is not installed: {BOOTSTRAP}", pytrace=False)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"the browser tier needs Chromium at {CHROMIUM}, not there: {BOOTSTRAP}", pytrace=False)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def watched_page(chromium: Any, allowed: tuple[str, ...]) -> Iterator[Any]:
    """A page in a fresh browser context (no cookies from another test) that fails the test on
    any error it reports but those naming one of ``allowed`` (Chromium logs every 4xx answer,
    and some tests provoke one on purpose). Closing the context cuts the change stream: what
    it reports then is no fault."""
    context = chromium.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    unexpected = [error for error in errors if not any(status in error for status in allowed)]
    context.close()
    assert not unexpected, f"the page reported errors: {unexpected}"


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A page whose only allowed error is a 401 page load, the login test's own doing."""
    yield from watched_page(chromium, ("401 (Unauthorized)",))
