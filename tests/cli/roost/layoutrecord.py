"""Reading the layout record ``roost restore`` works from, and ending a server as a reboot does:
what the restore tests, with fake programs and with real agents, share."""

from __future__ import annotations

import os
import time
from unittest import mock

from roost.base import procfs
from roost.pane.state import layout
from tests.conftest import Roost
from tests.signals import send_exactly


def record_file(roost: Roost, previous: bool = False) -> str:
    """Where the sandbox's roost keeps its record (its state directory, not this process's)."""
    with mock.patch.dict(os.environ, XDG_STATE_HOME=roost.env["XDG_STATE_HOME"]):
        return (layout.previous_path if previous else layout.record_path)(roost.socket)


def record(roost: Roost) -> dict | None:
    try:
        return layout.read(record_file(roost))
    except (OSError, ValueError):
        return None


def recorded_panes(roost: Roost) -> list[dict]:
    found = record(roost)
    if not found:
        return []
    return [p for s in found["sessions"] for w in s["windows"] for p in w["panes"]]


def wait_recorded(roost: Roost, count: int, agents: int = 0) -> None:
    """Until the record holds ``count`` panes, ``agents`` of them with their command line."""
    roost.wait_for(
        lambda: (
            len(panes := recorded_panes(roost)) == count
            and sum(bool(p["agent"] and p["agent"]["argv"]) for p in panes) == agents
        ),
        what=f"a record of {count} panes ({agents} agents)",
    )


DOWNTIME = 600
"""Seconds a reboot takes, as the files the killed processes left can tell (see :func:`reboot`)."""


def reboot(roost: Roost) -> None:
    """End the server as a power cut does: SIGKILL to it and to every process of its panes; then
    let the time a reboot takes pass over what they left in the sandbox's HOME, each file and
    folder made :data:`DOWNTIME` seconds older.

    An agent cut off while it writes leaves its lock behind: a test cuts the power just after a
    turn ends, while Claude Code still writes ``~/.claude.json`` under ``~/.claude.json.lock``.
    After a real reboot that lock is minutes old, and the agent restore resumes takes it over as
    stale; a few seconds old, it is a live writer's to that agent, which then waits for it as it
    exits, past the test's end."""
    server = int(roost.tmux("display-message", "-p", "#{pid}").strip())
    roots = [int(pid) for pid in roost.tmux("list-panes", "-a", "-F", "#{pane_pid}").split()]
    doomed = set(roots)
    stats = {pid: st for pid in procfs.pids() if (st := procfs.stat(pid)) is not None}
    grew = True
    while grew:
        more = {pid for pid, st in stats.items() if st.ppid in doomed} - doomed
        grew = bool(more)
        doomed |= more
    for pid in [server, *doomed]:
        send_exactly(pid, stats[pid].start_ticks if pid in stats else None)

    def ended(pid: int) -> bool:
        now = procfs.stat(pid)
        return now is None or now.gone or (pid in stats and now.start_ticks != stats[pid].start_ticks)

    # All of them, not the server alone: one still dying could write after the files are aged.
    roost.wait_for(lambda: all(ended(pid) for pid in [server, *doomed]), what="the server and its panes gone")
    before = time.time() - DOWNTIME
    for folder, names, files in os.walk(roost.env["HOME"]):
        for name in [*names, *files]:
            os.utime(os.path.join(folder, name), (before, before), follow_symlinks=False)
