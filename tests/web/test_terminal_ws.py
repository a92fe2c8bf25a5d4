"""``/ws/terminal/{pane}`` end to end: a real daemon, a real tmux pane, the real websockets client.

Who may connect, the first paint, keys and pastes, resizes shared between viewers, a pane
that closes, and every kind of bad message (which must close the socket and leave the pane
exactly as it was).
"""

from __future__ import annotations

import json
import time

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from roost.pane.tmux.view import BACKLOG
from tests.conftest import Roost
from tests.web.conftest import Web
from tests.web.person import Person
from tests.web.wsclient import Term, url


def size(roost: Roost, pane: str) -> tuple[int, int]:
    width, height = roost.tmux("display-message", "-p", "-t", pane, "#{pane_width} #{pane_height}").split()
    return int(width), int(height)


def sized(term: Term, cols: int, rows: int, *, last: bool = False) -> bool:
    """Whether the socket said the pane is now cols x rows: a ``size`` message, or a ``reset``
    (a tapped pane is repainted at its new size; see roost.pane.tmux.view)."""
    said = [(m["cols"], m["rows"]) for m in term.messages if m["type"] in ("size", "reset")]
    return bool(said) and (said[-1] == (cols, rows) if last else (cols, rows) in said)


def viewers(roost: Roost) -> list[str]:
    """The tmux clients that count for size: people and terminal views, not the daemon's watcher."""
    listing = roost.tmux("list-clients", "-F", "#{client_name} #{client_flags}").splitlines()
    return [line for line in listing if "ignore-size" not in line]


def refused(web: Web, pane: str, headers: dict[str, str]) -> int:
    with pytest.raises(InvalidStatus) as caught:
        connect(url(web, pane), additional_headers=headers, open_timeout=10)
    return caught.value.response.status_code


def test_no_cookie_no_terminal(web: Web) -> None:
    pane = web.roost.start()
    assert refused(web, pane, {"Origin": web.origin}) == 401
    assert refused(web, pane, {"Origin": web.origin, "Cookie": f"{web.cookie_name}=forged"}) == 401


def test_another_origin_is_refused(web: Web) -> None:
    pane = web.roost.start()
    cookie = web.cookie_header()
    assert refused(web, pane, {**cookie, "Origin": "http://evil.example"}) == 403
    assert refused(web, pane, {**cookie, "Origin": f"http://127.0.0.1:{web.daemon.port + 1}"}) == 403
    assert refused(web, pane, cookie) == 403  # a cookie without any Origin
    bearer = {"Authorization": f"Bearer {web.daemon.token}"}
    assert refused(web, pane, {**bearer, "Origin": "http://evil.example"}) == 403


def test_a_bearer_client_needs_no_origin(web: Web) -> None:
    pane = web.roost.start()
    with Term(web, pane, headers={"Authorization": f"Bearer {web.daemon.token}"}) as term:
        term.until(lambda: "reset" in term.kinds(), what="the first paint")


@pytest.mark.alone  # a bound on time
def test_the_screen_is_painted_then_keys_and_output_flow(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    roost.tmux("send-keys", "-t", pane, "echo before-$((6*7))", "Enter")
    roost.wait_screen(pane, "before-42")
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds(), what="the first paint")
        reset = term.messages[0]
        assert reset["type"] == "reset"
        assert (reset["cols"], reset["rows"]) == size(roost, pane)
        term.wait_text("before-42")
        term.send({"type": "input", "data": "echo hi-$((1+1))\r"})
        term.wait_text("hi-2\r\n")
    roost.wait_screen(pane, "hi-2")


def test_unicode_keys_and_a_paste_arrive_as_sent(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        term.send({"type": "input", "data": "echo héllo→\r"})
        term.wait_text("héllo→\r\n")
        # A paste cannot end a bracketed paste early: the markers in it are removed.
        term.send({"type": "input", "data": "echo pa\x1b[201~sted\r", "paste": True})
        term.wait_text("pasted\r\n")


def test_resizes_are_the_browsers_and_the_smallest_viewer_bounds_the_pane(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    with Term(web, pane, query="?cols=100&rows=30") as first:
        first.until(lambda: "reset" in first.kinds())
        assert size(roost, pane) == (100, 30)
        assert (first.messages[-1]["cols"], first.messages[-1]["rows"]) == (100, 30)
        first.send({"type": "resize", "cols": 72, "rows": 20})
        first.until(lambda: sized(first, 72, 20))
        assert size(roost, pane) == (72, 20)
        first.send({"type": "resize", "cols": 110, "rows": 35})
        first.until(lambda: sized(first, 110, 35))
        with Term(web, pane, query="?cols=90&rows=25") as second:
            second.until(lambda: "reset" in second.kinds())
            assert size(roost, pane) == (90, 25)
            first.until(lambda: sized(first, 90, 25))
            second.send({"type": "resize", "cols": 95, "rows": 26})
            first.until(lambda: sized(first, 95, 26))
            first.send({"type": "resize", "cols": 120, "rows": 40})  # bounded by the second viewer
            second.send({"type": "input", "data": "echo mark\r"})
            second.wait_text("mark\r\n")
            assert size(roost, pane) == (95, 26)
        # The smaller viewer left: the window grows to what the first one asked for.
        first.until(lambda: sized(first, 120, 40))
        assert size(roost, pane) == (120, 40)


def test_a_full_screen_program_is_painted_on_its_alternate_screen(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    roost.tmux("send-keys", "-t", pane, "echo under-vim; vim -u NONE -N", "Enter")
    roost.wait_for(lambda: roost.option(pane, "alternate_on") == "1", what="vim to start")
    with Term(web, pane) as term:
        term.until(lambda: b"\x1b[?1049h" in term.output, what="the alternate screen")
        normal, _, alternate = bytes(term.output).partition(b"\x1b[?1049h")
        assert b"under-vim" in normal
        assert b"~" in alternate
        term.send({"type": "input", "data": ":q\r"})
        roost.wait_for(lambda: roost.option(pane, "alternate_on") == "0", what="vim to quit")
        term.until(lambda: b"\x1b[?1049l" in term.output, what="vim leaving the alternate screen")


def test_a_pane_that_closes_is_reported(web: Web) -> None:
    roost = web.roost
    roost.start()
    pane = roost.window("second", "sh")
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        roost.tmux("kill-pane", "-t", pane)
        term.wait_closed()
        assert term.messages[-1] == {"type": "closed", "reason": f"pane {pane} closed"}
        assert term.close_code == 1000


def test_a_session_that_ends_is_reported(web: Web) -> None:
    roost = web.roost
    roost.start()
    pane = roost.start(session="other")
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        term.send({"type": "input", "data": "exit\r"})
        term.wait_closed()
        assert term.messages[-1]["type"] == "closed"
        assert term.close_code == 1000


def test_an_unknown_pane_is_closed_at_once(web: Web) -> None:
    web.roost.start()
    with Term(web, "%999") as term:
        term.wait_closed()
    assert term.messages == [{"type": "closed", "reason": "no pane %999"}]
    assert term.close_code == 1000


BAD = [
    ("not json", 1008, "a message must be JSON"),
    ("[1, 2]", 1008, "a message must be a JSON object"),
    (json.dumps({"type": "shout", "data": "x"}), 1008, "type must be input or resize"),
    (json.dumps({"type": "input"}), 1008, "input needs data: a non-empty string"),
    (json.dumps({"type": "input", "data": 7}), 1008, "input needs data: a non-empty string"),
    (
        json.dumps({"type": "input", "data": "x", "paste": "yes"}),
        1008,
        "paste and binary must be true or false",
    ),
    (
        json.dumps({"type": "input", "data": "→", "binary": True}),
        1008,
        "binary input must hold one byte per character",
    ),
    (json.dumps({"type": "resize", "cols": 0, "rows": 24}), 1008, "cols must be an integer from 1 to 10000"),
    (
        json.dumps({"type": "resize", "cols": "80", "rows": 24}),
        1008,
        "cols must be an integer from 1 to 10000",
    ),
    (
        json.dumps({"type": "resize", "cols": 80, "rows": True}),
        1008,
        "rows must be an integer from 1 to 10000",
    ),
    (b"\x00binary", 1008, "messages must be JSON text"),
    (
        json.dumps({"type": "input", "data": "echo oversized" + "x" * 70_000 + "\r"}),
        1009,
        "a message may hold at most 65536 bytes",
    ),
]


@pytest.mark.parametrize(("message", "code", "reason"), BAD, ids=[f"{i}" for i in range(len(BAD))])
def test_a_bad_message_closes_the_socket_and_leaves_the_pane_untouched(
    web: Web, message: str | bytes, code: int, reason: str
) -> None:
    roost = web.roost
    pane = roost.start()
    roost.tmux("send-keys", "-t", pane, "echo ready", "Enter")
    roost.wait_screen(pane, "ready")
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        before = (roost.screen(pane), size(roost, pane))
        term.send(message)
        term.wait_closed()
        assert (term.close_code, term.close_reason) == (code, reason)
    assert (roost.screen(pane), size(roost, pane)) == before
    with Term(web, pane) as again:  # the pane lives on, and takes keys from a good socket
        again.until(lambda: "reset" in again.kinds())
        again.send({"type": "input", "data": "echo still-$((2+3))\r"})
        again.wait_text("still-5")


@pytest.mark.alone  # a bound on time
def test_a_flood_of_output_arrives_and_the_view_keeps_up(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        term.send({"type": "input", "data": "seq 1 200000; echo flood-$((40+2))\r"})
        term.wait_text("flood-42\r\n", timeout=60)
        assert b"199999\r\n200000\r\n" in term.output
        term.send({"type": "input", "data": "echo after\r"})
        term.wait_text("after\r\n")


def test_the_daemon_stops_promptly_with_terminals_open(web: Web) -> None:
    pane = web.roost.start()
    with Term(web, pane) as term:
        term.until(lambda: "reset" in term.kinds())
        assert web.roost.tmux("display-message", "-p", "-t", pane, "#{pane_pipe}").strip() == "1"
        began = time.monotonic()
        assert web.daemon.stop() == 0
        assert time.monotonic() - began < 8
        term.wait_closed()
    # Its tmux client went with it, and so did the pane's tap.
    assert viewers(web.roost) == []
    assert web.roost.tmux("display-message", "-p", "-t", pane, "#{pane_pipe}").strip() == "0"


def test_a_person_in_tmux_attach_decides_the_size_while_attached(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    with Term(web, pane, query="?cols=100&rows=30") as term:
        term.until(lambda: "reset" in term.kinds())
        assert size(roost, pane) == (100, 30)
        with Person(roost, "main", 90, 20):
            # The person's terminal (20 rows, less tmux's status line and the pane's border).
            roost.wait_for(lambda: size(roost, pane) == (90, 18), what="the window to follow the person")
            term.until(lambda: sized(term, 90, 18, last=True))
            term.send({"type": "resize", "cols": 110, "rows": 32})
            term.send({"type": "input", "data": "echo typed-$((3*3))\r"})
            term.wait_text("typed-9\r\n")
            assert size(roost, pane) == (90, 18)  # no browser resizes a person's terminal
        # The person left: the browser's last request holds again.
        roost.wait_for(lambda: size(roost, pane) == (110, 32), what="the browser's size again")
        term.until(lambda: sized(term, 110, 32, last=True))


def test_a_browser_never_resizes_the_window_a_person_is_looking_at(web: Web) -> None:
    roost = web.roost
    first = roost.start()
    other = roost.window("other", "sh")
    with Person(roost, "main", 90, 20):
        roost.wait_for(lambda: size(roost, first) == (90, 18), what="the person's size")
        with Term(web, other, query="?cols=60&rows=15") as term:
            term.until(lambda: "reset" in term.kinds())
            term.send({"type": "resize", "cols": 61, "rows": 16})
            term.send({"type": "input", "data": "echo fine\r"})
            term.wait_text("fine\r\n")
            assert size(roost, first) == (90, 18)


def test_a_browser_that_goes_away_leaves_no_tmux_client_behind(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    for _ in range(3):
        with Term(web, pane) as term:
            term.until(lambda: "reset" in term.kinds())
    roost.wait_for(lambda: viewers(roost) == [], what="no view's client left")


def test_the_first_burst_after_connecting_arrives_whole(web: Web, tmp_path) -> None:
    """A viewer that has just connected (and sent its size, as a browser does) gets every byte
    of a large burst, its last lines included, in order.

    The burst stays under the view's backlog: past it a reader that is slow (this test's, on a
    busy machine) is rightly repainted instead, and a repaint is not what this test is about."""
    roost = web.roost
    pane = roost.start()
    lines = [f"{i:06d} " + "roost tmux pane agent xterm socket bytes " * 2 for i in range(9_000)]
    text = tmp_path / "burst.txt"
    text.write_text("\n".join(lines) + "\n")
    assert 3 * BACKLOG // 4 < text.stat().st_size + len(lines) < BACKLOG  # a newline becomes \r\n
    with Term(web, pane, query="?cols=90&rows=30") as term:
        term.until(lambda: "reset" in term.kinds(), what="the first paint")
        term.send({"type": "resize", "cols": 100, "rows": 35})
        term.until(lambda: sized(term, 100, 35), what="the new size")
        resets = term.kinds().count("reset")
        term.send({"type": "input", "data": f"cat {text}; echo burst-$((40+2))\r"})
        term.wait_text("burst-42\r\n", timeout=60)
        repaints = [m for m in term.messages if m["type"] == "reset"][resets:]
        assert not repaints, repaints  # every byte came as output, none repainted
        got = bytes(term.output)
        assert ("\r\n".join(lines[-50:]) + "\r\n").encode() in got
        assert got.count(b"\r\n008999 ") == 1
