"""``GET /changes?terminals=1``: the terminal list follows tmux, against a real daemon and tmux.

The roster's frames say nothing of a plain shell, so without the ``terminals`` frames a page
kept a closed shell's row and never showed a pane split from a terminal.
"""

from __future__ import annotations

import math
import queue
import time
from typing import Any

import pytest

from tests.api.helpers import about, sleeper
from tests.api.sse import Event, Events
from tests.web.conftest import Web
from tests.web.test_browser import log_in, row

FRAME = 1.0  # seconds from a tmux change to the frame that reports it
PATH = "/changes?terminals=1"
WINDOW = 0.1  # seconds a terminal-list frame gathers changes for


def listed(web: Web) -> set[str]:
    return {terminal["pane"] for terminal in web.daemon.get("/terminals")["terminals"]}


def next_terminals(stream: Events, timeout: float = 10) -> Event | None:
    """The next ``terminals`` frame, or None when none comes within ``timeout``."""
    try:
        return stream.until("terminals", timeout)
    except queue.Empty:
        return None


def settled(stream: Events) -> int:
    """The version once no ``terminals`` frame came for a second: the watcher may still be
    reporting the session a test just started (a loaded machine has been seen to take more
    than half a second between its notices)."""
    frame = next_terminals(stream)
    assert frame is not None, "no first terminals frame"
    version = frame.data["version"]
    while (frame := next_terminals(stream, 1.0)) is not None:
        version = frame.data["version"]
    return int(version)


def test_the_first_frame_says_read_the_list_and_has_no_id(web: Web) -> None:
    web.roost.start()
    with Events(web.daemon.unix(), PATH) as stream:
        first = stream.next()
        snapshot = stream.next()
    assert first.name == "terminals"
    assert first.id == ""  # EventSource keeps the last change's id: the resume point stays put
    assert set(first.data) == {"version"} and isinstance(first.data["version"], int)
    assert snapshot.name == "snapshot"  # the change frames follow as without ?terminals


def test_without_the_parameter_there_are_no_terminals_frames(web: Web) -> None:
    pane = web.roost.start()
    for path in ("/changes", "/changes?terminals=0"):
        with Events(web.daemon.unix(), path) as stream:
            assert stream.next().name == "snapshot"
            web.roost.tmux("split-window", "-d", "-t", pane, "sh")
            assert next_terminals(stream, 1.0) is None, path


@pytest.mark.parametrize("value", ["", "yes", "2", "true"])
def test_another_value_is_refused(web: Web, value: str) -> None:
    with web.daemon.unix() as client:
        response = client.get(f"/changes?terminals={value}")
    assert response.status_code == 400
    assert response.json() == {"error": "terminals must be 0 or 1"}  # never the value sent back


@pytest.mark.alone  # one frame per change rests on the gathering window, a bound on time
def test_a_pane_opening_renamed_or_closing_is_one_frame_each(web: Web) -> None:
    first = web.roost.start()
    with Events(web.daemon.unix(), PATH) as stream:
        version = settled(stream)
        for change in (
            lambda: web.roost.tmux("split-window", "-d", "-t", first, "sh"),
            lambda: web.roost.tmux("rename-window", "-t", first, "renamed"),
            lambda: web.roost.tmux("kill-pane", "-t", first),
        ):
            began = time.monotonic()
            change()
            frame = next_terminals(stream)
            assert frame is not None
            assert frame.data["version"] > version
            assert time.monotonic() - began < FRAME
            version = frame.data["version"]
            assert next_terminals(stream, 0.5) is None, "one change, one frame"
    assert first not in listed(web)


@pytest.mark.alone  # "no frame" means none within a bound on time, after a quiet spell
def test_output_alone_sends_no_frame(web: Web) -> None:
    pane = web.roost.start()
    web.roost.tmux("set-option", "-w", "-t", pane, "automatic-rename", "off")
    with Events(web.daemon.unix(), PATH) as stream:
        settled(stream)
        script = "for i in 1 2 3 4 5; do printf 'line %s\\n' $i; done"
        web.roost.tmux("send-keys", "-t", pane, script, "Enter")
        web.roost.wait_screen(pane, "line 5")
        assert next_terminals(stream, 0.5) is None


@pytest.mark.alone  # a bound on time
def test_a_burst_of_changes_is_gathered_into_few_frames(web: Web) -> None:
    pane = web.roost.start()
    with Events(web.daemon.unix(), PATH) as stream:
        settled(stream)
        began = time.monotonic()
        for _ in range(10):
            web.roost.tmux("split-window", "-d", "-t", pane, "-l", "1", "sh")
        spent = time.monotonic() - began
        frames = 0
        while next_terminals(stream, 0.5 if frames else 10) is not None:
            frames += 1
    # One frame per gathering window at most, however long ten tmux calls took on this machine.
    allowed = 1 + math.ceil(spent / WINDOW)
    assert 1 <= frames <= min(allowed, 9), f"{frames} frames for one burst of {spent:.2f} s"
    assert len(listed(web)) == 11


@pytest.mark.alone  # a bound on time
def test_a_gathering_burst_never_holds_back_a_change(web: Web) -> None:
    """A badge change made while a terminal-list frame gathers goes out at once, ahead of it.

    A try tells only when the claim was answered early in the 100 ms window, well before the
    terminal-list frame is due; on a busy machine one may not be, and the test tries again, up
    to five times."""
    pane = web.roost.start()
    with (
        Events(web.daemon.unix(), PATH) as stream,
        web.daemon.unix() as client,
        sleeper() as warm,
    ):
        # The first claim a daemon answers loads its schema: that cost is no part of this bound.
        assert client.post("/claim", json=about(warm, activity="idle")).status_code == 200
        settled(stream)
        for _ in range(5):
            while next_terminals(stream, 0.5) is not None:
                pass  # the last try's split and its end are reported
            with sleeper() as proc:
                split = web.roost.tmux("split-window", "-dP", "-F", "#{pane_id}", "-t", pane, "sh")
                began = time.monotonic()
                assert client.post("/claim", json=about(proc, activity="working")).status_code == 200
                answered = time.monotonic() - began
                seen: list[tuple[str, float]] = []
                while "terminals" not in dict(seen):
                    frame = stream.next()
                    seen.append((frame.name, round(frame.at - began, 3)))
            web.roost.tmux("kill-pane", "-t", split.strip())
            if answered < 0.05:
                break
    names = [name for name, _ in seen]
    assert "session_started" in names and names.index("session_started") < names.index("terminals"), seen
    at = dict(seen)
    assert at["terminals"] - at["session_started"] > 0.05, (answered, seen)  # not held to the end


def test_a_stopping_daemon_ends_the_stream(web: Web) -> None:
    with Events(web.daemon.unix(), PATH) as stream:
        stream.next()
        web.daemon.stop()
        assert stream.ended()


@pytest.mark.browser
@pytest.mark.alone  # a bound on time: three frames
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
