"""``rosterd watch`` and ``rosterd changes``: running processes that print every change.

Each runs as a real subprocess; a badge changes in a real tmux pane; the line about it must
arrive within a second. ``--json`` lines are compared with the same stream read by httpx.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time

import pytest

from tests.api.sse import Events
from tests.cli.rosterd.helpers import GENEROUS, Follower, badged, body, masked, ok, session_of, state
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon

PROMPT = 1.0  # seconds from a badge change to the line about it


def about(key: str, event: str):
    """A predicate for a ``changes --json`` line: that event, about that session."""
    return lambda line: (doc := json.loads(line)).get("event") == event and doc.get("session_key") == key


@pytest.mark.alone  # a bound on time
def test_changes_prints_a_line_within_a_second_of_a_badge_change(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="golf")
    key = session_of(running, pane)["session_key"]
    ok(running, "name", key, "golf")
    with Follower(running, "changes") as follower:
        first, _ = follower.next()
        assert first.decode().split(" ", 2)[1] == "snapshot"
        changed = time.monotonic()  # before the command: its own run time counts too
        state(roost, pane, "blocked")
        line, at = follower.until(lambda text: key.encode() in text)
        node = json.loads(body(running, "/swarm/snapshot"))["node"]
        assert line.decode().split(" ", 5)[1:] == ["attention", node, key, "golf", "needs input"]
        assert int(line.split(b" ")[0]) > 0
        print(f"changes: badge to line in {(at - changed) * 1000:.0f} ms")
        assert at - changed < PROMPT
        assert follower.stop() == 130


@pytest.mark.parametrize(("args", "path"), [((), "/swarm/changes"), (("--local",), "/changes")])
def test_changes_json_lines_are_the_frames_as_the_daemon_sent_them(
    roost: Roost, running: Daemon, args: tuple[str, ...], path: str
) -> None:
    """Across the swarm by default (the specification's "one line per change across the swarm"),
    this node's own numbering with ``--local``."""
    pane = badged(roost, "working", session="hotel")
    key = session_of(running, pane)["session_key"]
    with (
        Events(running.unix(timeout=30), path) as events,
        Follower(running, "changes", "--json", *args) as follower,
    ):
        assert json.loads(follower.next()[0])["event"] == "snapshot"
        changed = time.monotonic()  # before the command: its own run time counts too
        state(roost, pane, "blocked")
        line, at = follower.until(about(key, "attention"))
        assert at - changed < PROMPT
        seen = events.until("attention", key=key)
        assert line == json.dumps(seen.data, separators=(",", ":")).encode()
        assert json.loads(line)["seq"] == int(seen.id.split(":")[1])


def test_changes_since_replays_what_came_after_that_seq(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="india")
    key = session_of(running, pane)["session_key"]
    state(roost, pane, "blocked")
    running.wait_for(lambda: session_of(running, pane)["activity"] == "needs_attention")
    head = json.loads(body(running, "/status"))["seq"]
    with Follower(running, "changes", "--local", "--json", "--since", str(head - 1)) as follower:
        line, _ = follower.next()
        assert json.loads(line)["seq"] == head
    with Follower(running, "changes", "--local", "--since=0") as follower:
        lines = [follower.next()[0].decode() for _ in range(head)]
    assert [int(text.split(" ")[0]) for text in lines] == list(range(1, head + 1))
    assert any(text.split(" ")[1:3] == ["attention", key] for text in lines), lines
    # across the swarm (the default), by the swarm's own numbering, bare or as EPOCH:SEQ
    union = json.loads(body(running, "/swarm/snapshot"))
    for since in (str(union["seq"] - 1), f"{union['status_epoch']}:{union['seq'] - 1}"):
        with Follower(running, "changes", "--json", "--since", since) as follower:
            line, _ = follower.next()
            assert json.loads(line)["seq"] == union["seq"] and json.loads(line)["event"] != "snapshot"


@pytest.mark.alone  # a bound on time
def test_watch_reprints_the_roster_within_a_second_of_a_badge_change(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="juliet")
    key = session_of(running, pane)["session_key"]
    ok(running, "name", key, "juliet")
    with Follower(running, "watch") as follower:
        follower.until(lambda text: text.startswith(b"juliet ") and b" working " in text)
        follower.until(lambda text: text == b"")  # a table ends with a blank line in a pipe
        changed = time.monotonic()  # before the command: its own run time counts too
        state(roost, pane, "blocked")
        _, at = follower.until(lambda text: text.startswith(b"juliet ") and b" needs input " in text)
        print(f"watch: badge to table in {(at - changed) * 1000:.0f} ms")
        assert at - changed < PROMPT


def test_watch_json_prints_each_snapshot_frame_as_received(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="kilo")
    key = session_of(running, pane)["session_key"]

    def activity(line: bytes) -> str | None:
        doc = json.loads(line)
        assert doc["schema"] == "rosterd.snapshot.v1"
        return next((r["activity"] for r in doc["records"] if r["session_key"] == key), None)

    with (
        Events(running.unix(timeout=30), "/events") as events,
        Follower(running, "watch", "--json") as follower,
    ):
        assert activity(follower.next()[0]) == "active"
        changed = time.monotonic()  # before the command: its own run time counts too
        state(roost, pane, "blocked")
        line, at = follower.until(lambda text: activity(text) == "needs_attention")
        assert at - changed < PROMPT
        frames = []
        while not frames or frames[-1].id != f"{json.loads(line)['status_epoch']}:{json.loads(line)['seq']}":
            frames.append(events.next())
        sent = json.dumps(frames[-1].data, separators=(",", ":")).encode()
        assert masked(line) == masked(sent)


def test_a_stream_ends_with_exit_2_when_the_daemon_stops(running: Daemon) -> None:
    with Follower(running, "changes") as changes, Follower(running, "watch", "--json") as watch:
        changes.next()
        watch.next()
        assert running.stop() == 0
        for follower in (changes, watch):
            code, stderr = follower.finish()
            assert code == 2
            assert "the daemon closed the stream on" in stderr and str(running.socket) in stderr


def test_watch_on_a_terminal_redraws_in_place(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="lima")
    ok(running, "name", session_of(running, pane)["session_key"], "lima")
    main, terminal = pty.openpty()
    proc = subprocess.Popen(
        [str(BIN / "rosterd"), "watch"], env=running.env, stdout=terminal, stderr=terminal
    )
    os.close(terminal)
    seen = b""
    try:
        deadline = time.monotonic() + GENEROUS
        state(roost, pane, "blocked")
        while not re.search(rb"\x1b\[H\x1b\[2J[^\x1b]*lima +- +needs input", seen):
            assert time.monotonic() < deadline, seen
            if select.select([main], [], [], 0.1)[0]:
                seen += os.read(main, 65536)
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(GENEROUS) == 130
        os.close(main)
    assert b"\n\n" not in seen.replace(b"\r", b"")  # no blank separator lines on a terminal


def test_ctrl_c_ends_changes_at_once_whichever_thread_the_signal_reaches(running: Daemon) -> None:
    """``rosterd changes`` into a pipe runs a second thread (it watches for the reader going);
    a Ctrl-C the kernel hands that thread must still stop the stream, every time."""
    for _ in range(5):
        with Follower(running, "changes") as follower:
            follower.next()  # the snapshot line: the stream is up
            began = time.monotonic()
            assert follower.stop() == 130
            assert time.monotonic() - began < 5


def test_a_reader_that_stops_reading_ends_the_stream_quietly(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="mike")
    proc = subprocess.Popen(
        [str(BIN / "rosterd"), "changes", "--json"],
        env=running.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    state(roost, pane, "blocked")  # the next line has nowhere to go
    assert proc.wait(GENEROUS) == 0
    assert proc.stderr.read() == b""
