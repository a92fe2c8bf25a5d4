"""The order a pane's hook events are taken in (:mod:`roost.faces.hook.order`), in process:
the number its lock file keeps, a late event, the lock a forked copy keeps, and no pane."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from roost.faces.hook import order


@pytest.fixture
def pane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The environment a pane gives its hook, on a "server" socket that is a plain file here:
    only its device and inode name the lock file. Yields the directory lock files go in."""
    socket = tmp_path / "tmux-socket"
    socket.touch()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("TMUX", f"{socket},1,0")
    monkeypatch.setenv("TMUX_PANE", "%7")
    yield runtime / "roost" / order.DIRECTORY
    ended()


def ended() -> None:
    """Let go of the locks this process took, as a hook's exit does: each test's ``take()`` is
    one hook, and a second in the same process would wait on the first for good."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.path.basename(os.path.dirname(os.readlink(f"/proc/self/fd/{fd}"))) == order.DIRECTORY:
                os.close(int(fd))
        except OSError:
            continue


def the_file(directory: Path) -> Path:
    [found] = directory.iterdir()
    return found


def test_the_first_event_takes_its_place_and_keeps_its_number(pane: Path) -> None:
    assert order.take()
    kept = the_file(pane)
    assert kept.name.endswith("-7")
    assert kept.read_bytes() == b"%020d" % order.STARTED
    assert (kept.stat().st_mode & 0o777, pane.stat().st_mode & 0o777) == (0o600, 0o700)


def test_an_event_that_finds_a_later_one_taken_is_late_and_keeps_the_later_number(
    pane: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order.take()
    ended()
    kept = the_file(pane)
    monkeypatch.setattr(order, "STARTED", order.STARTED - 1)  # this hook started before that one
    assert not order.take()
    assert kept.read_bytes() == b"%020d" % (order.STARTED + 1)


def test_a_later_event_takes_the_place_after_an_earlier_one(
    pane: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order.take()
    ended()
    monkeypatch.setattr(order, "STARTED", order.STARTED + 5)
    assert order.take()
    assert the_file(pane).read_bytes() == b"%020d" % order.STARTED


def test_an_unreadable_number_is_taken_as_none(pane: Path) -> None:
    order.take()
    ended()
    kept = the_file(pane)
    kept.write_bytes(b"garbage\x1b[2J")
    assert order.take()
    assert kept.read_bytes() == b"%020d" % order.STARTED


def test_the_lock_is_held_until_the_process_ends_and_a_forked_copy_keeps_it(pane: Path) -> None:
    """A hook forks its copy in the middle of the event: the copy must go on holding the pane."""
    script = (
        "import os, sys, time\n"
        "from roost.faces.hook import order\n"
        "order.take()\n"
        "if os.fork():\n"
        "    os._exit(0)\n"
        "print('copy', flush=True)\n"
        "sys.stdin.read()\n"
    )
    copy = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=os.environ.copy()
    )
    assert copy.stdout is not None and copy.stdin is not None
    assert copy.stdout.readline() == b"copy\n"
    copy.wait(10)  # the parent is gone; its copy lives on, reading stdin
    fd = os.open(the_file(pane), os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        copy.stdin.close()  # the copy ends
        deadline = time.monotonic() + 10
        while not free(fd):
            assert time.monotonic() < deadline, "the lock outlived the copy"
            time.sleep(0.05)
    finally:
        os.close(fd)


def free(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@pytest.mark.parametrize("pane_id", ["", "%", "7", "%7/../x", "%-1"])
def test_no_pane_is_ordered_by_the_roster_alone(
    pane: Path, monkeypatch: pytest.MonkeyPatch, pane_id: str
) -> None:
    monkeypatch.setenv("TMUX_PANE", pane_id)
    assert order.take() is True
    assert not pane.exists()


def test_outside_tmux_nothing_is_made(pane: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX")
    assert order.take() is True
    assert not pane.exists()
