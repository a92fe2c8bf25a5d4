"""``GET /terminals/changes``: the terminal list's own stream, against a real daemon and tmux.

The roster's stream says nothing of a plain shell, so without this a page kept a closed
shell's row and never showed a pane split from a terminal.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

from tests.api.sse import Events
from tests.daemon.fixture import Daemon
from tests.web.conftest import Web
from tests.web.test_browser import log_in, row

FRAME = 1.0  # seconds from a tmux change to the frame that reports it


def listed(web: Web) -> set[str]:
    return {terminal["pane"] for terminal in web.daemon.get("/terminals")["terminals"]}


def quiet(stream: Events, seconds: float) -> bool:
    """True when no frame arrives for ``seconds``."""
    try:
        stream.next(seconds)
    except queue.Empty:
        return True
    return False


def settled(stream: Events) -> int:
    """The version once the stream has been quiet for half a second: the watcher may still be
    reporting the session a test just started."""
    version = stream.next().data["version"]
    while True:
        try:
            version = stream.next(0.5).data["version"]
        except queue.Empty:
            return int(version)


def test_the_stream_opens_with_the_current_version_and_no_id(web: Web) -> None:
    web.roost.start()
    with Events(web.daemon.unix(), "/terminals/changes") as stream:
        first = stream.next()
    assert first.name == "terminals"
    assert first.id == ""  # nothing to resume from: every connect starts with "read the list"
    assert isinstance(first.data["version"], int)
    assert set(first.data) == {"version"}


def test_a_pane_opening_closing_or_renamed_is_one_frame_each(web: Web) -> None:
    first = web.roost.start()
    with Events(web.daemon.unix(), "/terminals/changes") as stream:
        version = settled(stream)
        for change in (
            lambda: web.roost.tmux("split-window", "-d", "-t", first, "sh"),
            lambda: web.roost.tmux("rename-window", "-t", first, "renamed"),
            lambda: web.roost.tmux("kill-pane", "-t", first),
        ):
            began = time.monotonic()
            change()
            frame = stream.next()
            assert frame.name == "terminals"
            assert frame.data["version"] > version
            assert time.monotonic() - began < FRAME
            version = frame.data["version"]
            assert quiet(stream, 0.5), "one change, one frame"
    assert first not in listed(web)


def test_output_alone_sends_no_frame(web: Web) -> None:
    pane = web.roost.start()
    web.roost.tmux("set-option", "-w", "-t", pane, "automatic-rename", "off")
    with Events(web.daemon.unix(), "/terminals/changes") as stream:
        settled(stream)
        script = "for i in 1 2 3 4 5; do printf 'line %s\\n' $i; done"
        web.roost.tmux("send-keys", "-t", pane, script, "Enter")
        web.roost.wait_screen(pane, "line 5")
        assert quiet(stream, 0.5)


def test_a_burst_of_changes_is_gathered_into_few_frames(web: Web) -> None:
    pane = web.roost.start()
    with Events(web.daemon.unix(), "/terminals/changes") as stream:
        settled(stream)
        for _ in range(10):
            web.roost.tmux("split-window", "-d", "-t", pane, "-l", "1", "sh")
        frames = [stream.next()]
        while not quiet(stream, 0.5):
            frames.append(stream.next(0))
    assert len(frames) <= 3, f"{len(frames)} frames for one burst"
    assert len(listed(web)) == 11


def test_one_limit_covers_both_kinds_of_stream(daemon: Daemon) -> None:
    daemon.settings = {"api": {"max_streams": 1}}
    daemon.start()
    refused = {"error": "1 streams are open already; close one first"}
    for held, asked in (("/terminals/changes", "/changes"), ("/changes", "/terminals/changes")):
        with Events(daemon.unix(), held) as stream:
            stream.next()
            with daemon.unix() as client:
                response = client.get(asked)
            assert response.status_code == 429, asked
            assert response.json() == refused

        def reopens(path: str = asked) -> bool:
            with daemon.unix() as client, client.stream("GET", path) as response:
                return response.status_code == 200

        assert daemon.wait_for(reopens, what="a closed stream to free its place")


def test_a_stopping_daemon_ends_the_stream(web: Web) -> None:
    with Events(web.daemon.unix(), "/terminals/changes") as stream:
        stream.next()
        web.daemon.stop()
        assert stream.ended()


@pytest.mark.browser
def test_the_sidebar_follows_panes_made_and_closed_outside_the_page(page: Any, web: Web) -> None:
    roost = web.roost
    first = roost.start()
    log_in(page, web)
    page.wait_for_selector(row(first))
    split = roost.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", first, "sh").strip()
    page.wait_for_selector(row(split), timeout=FRAME * 1000 * 3)
    roost.tmux("kill-pane", "-t", split)
    page.wait_for_selector(row(split), state="detached", timeout=FRAME * 1000 * 3)
    roost.tmux("rename-window", "-t", first, "renamed-outside")
    page.wait_for_selector(f"{row(first)}:has-text('renamed-outside')", timeout=FRAME * 1000 * 3)
