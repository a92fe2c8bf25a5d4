"""The web app in Debian's Chromium, driven by Playwright, against a real daemon and tmux.

What a person does: log in with the printed link, open a terminal from the sidebar, type,
resize the window, run vim and quit it, watch a badge change, see a pane close.

Set ``ROOST_WEB_SCREENSHOT=/some/file.png`` to keep the screenshot of two open sessions that
``test_two_sessions_look_right`` takes (otherwise it goes to the test's temp dir).
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Roost
from tests.web.conftest import Web

pytestmark = pytest.mark.browser


def row(pane: str) -> str:
    return f'li.session[data-pane="{pane}"]'


def log_in(page: Any, web: Web) -> None:
    page.goto(web.new_link())
    page.wait_for_selector("li.session")


def screen(page: Any, pane: str) -> list[str]:
    """The terminal's rows as the browser shows them (xterm's DOM renderer)."""
    text = page.locator(f'.view[data-pane="{pane}"] .xterm-rows').inner_text()
    return [line.rstrip() for line in text.replace("\xa0", " ").split("\n")]


def wait_screen(page: Any, pane: str, predicate: Any, what: str, timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = screen(page, pane)
        if predicate(lines):
            return lines
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; the terminal shows {screen(page, pane)}")


def open_terminal(page: Any, web: Web, pane: str) -> None:
    page.click(row(pane))
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"] .xterm-rows')
    wait_screen(page, pane, lambda lines: any(line.strip() for line in lines), "the first paint")


def run(page: Any, command: str) -> None:
    page.keyboard.type(command)
    page.keyboard.press("Enter")


def pane_size(roost: Roost, pane: str) -> tuple[int, int]:
    width, height = roost.tmux("display-message", "-p", "-t", pane, "#{pane_width} #{pane_height}").split()
    return int(width), int(height)


def tty_size(roost: Roost, pane: str) -> tuple[int, int]:
    """The pane's terminal size as the kernel holds it: what ``tput cols`` in the pane reads.

    tmux updates ``pane_width`` at once but sets the pty's size on a later turn of its loop, so a
    command typed as soon as the format changes can still read the old size.
    """
    tty = roost.tmux("display-message", "-p", "-t", pane, "#{pane_tty}").strip()
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
    try:
        rows, cols = struct.unpack("hhhh", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2]
    finally:
        os.close(fd)
    return cols, rows


def test_the_link_logs_in_once(page: Any, chromium: Any, web: Web) -> None:
    pane = web.roost.start()
    link = web.printed_link()
    page.goto(link)
    page.wait_for_selector(row(pane))
    assert page.url == f"{web.origin}/"
    cookies = {cookie["name"]: cookie for cookie in page.context.cookies()}
    assert cookies[web.cookie_name]["httpOnly"] is True
    assert cookies[web.cookie_name]["sameSite"] == "Strict"
    other = chromium.new_context()
    try:
        again = other.new_page()
        response = again.goto(link)
        assert response.status == 401
        assert "used already" in again.content()
        again.goto(f"{web.origin}/")
        assert again.url == f"{web.origin}/login"
        assert "Log in with the link" in again.content()
    finally:
        other.close()


def test_open_a_shell_and_echo(page: Any, web: Web) -> None:
    pane = web.roost.start()
    log_in(page, web)
    open_terminal(page, web, pane)
    run(page, "echo h''i")
    wait_screen(page, pane, lambda lines: "hi" in lines, "hi on a line of its own")
    web.roost.wait_screen(pane, "echo h''i")


@pytest.mark.alone  # a bound on time: ten seconds for the browser, tmux and the shell to agree
def test_resizing_the_window_resizes_the_pane(page: Any, web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    log_in(page, web)
    open_terminal(page, web, pane)
    wide = pane_size(roost, pane)
    run(page, "tput cols")
    wait_screen(page, pane, lambda lines: str(wide[0]) in lines, f"tput cols to say {wide[0]}")
    page.set_viewport_size({"width": 800, "height": 520})
    roost.wait_for(lambda: pane_size(roost, pane)[0] < wide[0] - 20, what="the pane to shrink")
    narrow = pane_size(roost, pane)
    roost.wait_for(lambda: tty_size(roost, pane) == narrow, what="the pane's terminal to shrink")
    run(page, "clear; tput cols")
    wait_screen(page, pane, lambda lines: str(narrow[0]) in lines, f"tput cols to say {narrow[0]}")
    cols = page.evaluate(f"window.roost.open.get('{pane}').view.term.cols")
    assert cols == narrow[0]


def test_vim_runs_and_quits(page: Any, web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    log_in(page, web)
    open_terminal(page, web, pane)
    run(page, "echo before-vim")
    wait_screen(page, pane, lambda lines: "before-vim" in lines, "the echo")
    run(page, "vim -u NONE -N")
    wait_screen(page, pane, lambda lines: sum(line == "~" for line in lines) > 5, "vim's empty buffer")
    assert page.evaluate(f"window.roost.open.get('{pane}').view.term.buffer.active.type") == "alternate"
    page.keyboard.type(":q")
    page.keyboard.press("Enter")
    roost.wait_for(lambda: roost.option(pane, "alternate_on") == "0", what="vim to quit")
    wait_screen(page, pane, lambda lines: "before-vim" in lines and "~" not in lines, "the shell again")
    assert page.evaluate(f"window.roost.open.get('{pane}').view.term.buffer.active.type") == "normal"


@pytest.mark.alone  # a bound on time
def test_a_badge_change_shows_within_a_second(page: Any, web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    log_in(page, web)
    assert page.locator(f"{row(pane)} .badge").is_hidden()  # a plain shell is unmarked
    open_terminal(page, web, pane)
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    began = time.monotonic()
    proc = roost.run("state", "working", env=inside)
    assert proc.returncode == 0, proc.stderr
    page.wait_for_selector(f'{row(pane)} .badge[data-state="working"]', timeout=5000)
    elapsed = time.monotonic() - began
    assert elapsed < 1.0, f"the badge took {elapsed:.2f}s"
    assert page.locator(f"{row(pane)} .badge").inner_text() == "working"
    assert page.locator(f'.tab[data-pane="{pane}"] .badge').inner_text() == "working"
    assert (
        page.locator(f'{row(pane)} >> xpath=ancestor::section[1]//span[@class="rollup"]').inner_text()
        == "1 working"
    )
    assert roost.run("state", "blocked", env=inside).returncode == 0
    page.wait_for_selector(f'{row(pane)} .badge[data-state="blocked"]', timeout=5000)
    assert page.locator(f"{row(pane)} .badge").inner_text() == "needs input"


def test_a_closed_pane_shows_closed(page: Any, web: Web) -> None:
    roost = web.roost
    roost.start()
    pane = roost.window("doomed", "sh")
    log_in(page, web)
    page.wait_for_selector(row(pane))
    open_terminal(page, web, pane)
    roost.tmux("kill-pane", "-t", pane)
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="closed"]')
    assert "closed" in page.locator(f'.view[data-pane="{pane}"] .note').inner_text()
    assert page.locator(f'.tab[data-pane="{pane}"]').get_attribute("data-view") == "closed"


def test_two_sessions_look_right(page: Any, web: Web, tmp_path: Path) -> None:
    roost = web.roost
    first = roost.start()
    roost.tmux("new-session", "-d", "-s", "api", "-c", "/tmp", "sh")
    second = roost.tmux("display-message", "-p", "-t", "api:", "#{pane_id}").strip()
    roost.tmux("rename-window", "-t", "api:", "fixer")
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": second}
    assert roost.run("state", "working", env=inside).returncode == 0
    log_in(page, web)
    page.wait_for_selector(f'{row(second)} .badge[data-state="working"]')
    open_terminal(page, web, second)
    run(page, "printf 'building the fixer\\n'; ls /")
    open_terminal(page, web, first)
    run(page, "echo hello from roost")
    wait_screen(page, first, lambda lines: "hello from roost" in lines, "the echo")
    assert page.locator('.tab[role="tab"]').count() == 2
    shot = Path(os.environ.get("ROOST_WEB_SCREENSHOT") or tmp_path / "two-sessions.png")
    page.screenshot(path=str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")
