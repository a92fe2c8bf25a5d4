"""Pane views fed by a tap (``pipe-pane``), against a real tmux server.

What must hold: every byte after a repaint arrives, for every viewer of the pane, however
viewers come and go; someone else's ``pipe-pane`` is never taken over; a pipe that ends is
noticed; nothing (pipe, FIFO, cat) is left behind by the last viewer.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from roost.pane.tmux.server import Server
from roost.pane.tmux.view import Bytes, Closed, PaneView, Reset, Size, Taps, pipe_command
from tests.conftest import Roost, naming


class Screen:
    """What a viewer would show: the last repaint and the output after it."""

    def __init__(self, view: PaneView) -> None:
        self.view = view
        self.seen = bytearray()
        self.resets = 0

    async def until(self, text: bytes, timeout: float = 30) -> None:
        async def read() -> None:
            while text not in self.seen:
                frame = await self.view.next()
                if isinstance(frame, Reset):
                    self.resets += 1
                    self.seen[:] = frame.data
                elif isinstance(frame, Bytes):
                    self.seen.extend(frame.data)
                elif isinstance(frame, Closed):
                    raise AssertionError(f"closed: {frame.reason}")
                else:
                    assert isinstance(frame, Size)

        await asyncio.wait_for(read(), timeout)


async def opened(roost: Roost, pane: str, taps: Taps, **options: int) -> tuple[PaneView, Screen]:
    """A tapped view of ``pane``, open and painted (the shell's prompt is on it)."""
    view = PaneView(Server(roost.socket), pane, taps=taps, **options)
    await view.open(80, 24)
    screen = Screen(view)
    await screen.until(b"#")
    return view, screen


async def eventually(predicate: Callable[[], object], what: str, timeout: float = 5) -> None:
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def piped(roost: Roost, pane: str) -> bool:
    return roost.tmux("display-message", "-p", "-t", pane, "#{pane_pipe}").strip() == "1"


def cats(taps: Taps) -> list[Path]:
    """What the taps left in their directory (each pipe's FIFO has a directory of its own)."""
    return sorted(taps.directory.iterdir()) if taps.directory.exists() else []


def pipers(directory: Path) -> list[int]:
    """Processes other than this one that name ``directory`` in their command line (a pipe's
    ``sh -c '… exec cat > …'``) or hold a file under it open (its ``cat``)."""
    found = set(naming(str(directory).encode()))
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if any(os.readlink(fd).startswith(str(directory)) for fd in (entry / "fd").iterdir()):
                    found.add(int(entry.name))
            except OSError:
                continue
    found.discard(os.getpid())
    return sorted(found)


def test_two_viewers_share_one_pipe_and_both_see_every_line(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()

    async def scenario() -> None:
        taps = Taps(tmp_path / "taps")
        first, one = await opened(roost, pane, taps)
        assert piped(roost, pane) and taps.tapped(roost.socket, pane)
        assert await asyncio.to_thread(roost.wait_for, lambda: pipers(taps.directory), 5, "the pipe's cat")
        await first.write(b"seq 1 30000; echo first-$((6*7))\r")
        await one.until(b"first-42\r\n")
        second = PaneView(Server(roost.socket), pane, taps=taps)
        await second.open(80, 24)
        two = Screen(second)
        await two.until(b"first-42")
        # The second viewer's repaint reached the first one too; from there both get all of it.
        await second.write(b"seq 100001 160000; echo second-$((6*7))\r")
        await one.until(b"second-42\r\n")
        await two.until(b"second-42\r\n")
        for screen in (one, two):
            assert b"159999\r\n160000\r\n" in screen.seen
            tail = bytes(screen.seen[screen.seen.rindex(b"seq 100001") :])
            numbers = [int(line) for line in tail.split(b"\r\n")[1:-2] if line.isdigit()]
            assert numbers == list(range(numbers[0], 160001)), "a line went missing or came twice"
        assert one.resets >= 2 and two.resets >= 1  # the join repainted the first viewer too
        await first.close()
        assert piped(roost, pane), "the pipe stays while a viewer is left"
        await second.close()
        assert not piped(roost, pane) and not taps.tapped(roost.socket, pane)
        assert cats(taps) == []

    asyncio.run(scenario())
    roost.wait_for(lambda: not pipers(tmp_path / "taps"), 5, "the pipe's cat to exit")


def test_someone_elses_pipe_is_left_alone(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()
    log = tmp_path / "log.txt"
    roost.tmux("pipe-pane", "-O", "-t", pane, f"cat >> {log}")

    async def scenario() -> None:
        taps = Taps(tmp_path / "taps")
        view, screen = await opened(roost, pane, taps)
        assert not taps.tapped(roost.socket, pane)  # read through %output instead
        await view.write(b"echo seen-$((6*7))\r")
        await screen.until(b"seen-42\r\n")
        await view.close()

    asyncio.run(scenario())
    roost.tmux("send-keys", "-t", pane, "echo logged-$((6*7))", "Enter")
    roost.wait_screen(pane, "logged-42")
    assert piped(roost, pane)
    assert asyncio.run(_wait_file(log, b"logged-42")), "the log stopped receiving the pane's output"


async def _wait_file(path: Path, text: bytes, timeout: float = 10) -> bool:
    for _ in range(int(timeout / 0.05)):
        if path.exists() and text in path.read_bytes():
            return True
        await asyncio.sleep(0.05)
    return False


def test_a_pipe_taken_by_someone_else_turns_the_view_to_output(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()
    log = tmp_path / "log.txt"

    async def scenario() -> None:
        taps = Taps(tmp_path / "taps")
        view, screen = await opened(roost, pane, taps)
        assert taps.tapped(roost.socket, pane)
        roost.tmux("pipe-pane", "-O", "-t", pane, f"cat >> {log}")
        await eventually(lambda: not taps.tapped(roost.socket, pane), "the view to leave the tap")
        await view.write(b"echo still-$((6*7))\r")
        await screen.until(b"still-42\r\n")
        await view.close()
        assert piped(roost, pane), "the log's pipe was not closed by the view"
        assert await _wait_file(log, b"still-42")

    asyncio.run(scenario())


def test_a_killed_cat_is_replaced_and_output_goes_on(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()

    async def scenario() -> None:
        taps = Taps(tmp_path / "taps")
        view, screen = await opened(roost, pane, taps)
        roost.tmux("pipe-pane", "-t", pane)  # closes the tap's pipe, as a dying cat would
        await eventually(lambda: piped(roost, pane), "the tap to open its pipe again")
        assert taps.tapped(roost.socket, pane)
        await view.write(b"echo again-$((6*7))\r")
        await screen.until(b"again-42\r\n")
        await view.close()
        assert not piped(roost, pane) and cats(taps) == []

    asyncio.run(scenario())


def test_a_slow_viewer_of_a_tap_is_repainted_not_flooded(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()

    async def scenario() -> int:
        view, screen = await opened(roost, pane, Taps(tmp_path / "taps"), backlog=20_000)
        try:
            await view.write(b"seq 1 50000; echo done-$((6*7))\r")
            await asyncio.to_thread(roost.wait_screen, pane, "done-42", 30)
            await screen.until(b"done-42")
            return screen.resets
        finally:
            await view.close()

    assert asyncio.run(scenario()) >= 2


def test_a_stalled_viewer_of_a_flood_costs_no_repaints_until_it_reads(roost: Roost, tmp_path: Path) -> None:
    """The flood is 20 MB, about seven seconds of output here. ``make test-fast`` floods 2 MB
    (``ROOST_FLOOD_BYTES``): still forty backlogs, and over two repaint intervals (``CATCH_UP``)
    in which a stalled viewer must cost no pipe."""
    pane = roost.start()
    flood = int(os.environ.get("ROOST_FLOOD_BYTES", "20000000"))

    async def scenario() -> tuple[int, int, int]:
        taps = Taps(tmp_path / "taps")
        view, screen = await opened(roost, pane, taps, backlog=50_000)
        try:
            await asyncio.sleep(0.5)
            view.pending()  # the opening's paints (one more if the window was resized)
            base, resets = taps.opened, screen.resets
            await view.write(f"yes | head -c {flood}; echo flood-$((6*7))\r".encode())
            await asyncio.to_thread(roost.wait_screen, pane, "flood-42", 30)
            stalled = taps.opened - base  # nobody read the view during the whole flood
            await screen.until(b"flood-42")
            return stalled, taps.opened - base, screen.resets - resets
        finally:
            await view.close()

    stalled, after, repaints = asyncio.run(scenario())
    assert stalled == 0, "a viewer that does not read is not repainted again and again"
    assert after == 1 and repaints == 1  # one repaint once it read again, showing the end


def test_a_pane_that_exits_while_tapped_is_reported(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()

    async def scenario() -> str:
        taps = Taps(tmp_path / "taps")
        view, _ = await opened(roost, pane, taps)
        roost.tmux("kill-pane", "-t", pane)
        while not isinstance(frame := await asyncio.wait_for(view.next(), 10), Closed):
            pass
        await view.close()
        assert cats(taps) == []
        return frame.reason

    reason = asyncio.run(scenario())
    assert "closed" in reason or "exited" in reason


def test_viewers_coming_and_going_at_once_leave_nothing_behind(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()
    roost.tmux("send-keys", "-t", pane, "while :; do seq 1 2000; sleep 0.01; done", "Enter")

    async def scenario() -> None:
        taps = Taps(tmp_path / "taps")
        server = Server(roost.socket)

        async def visit(delay: float) -> None:
            await asyncio.sleep(delay)
            view = PaneView(server, pane, taps=taps)
            await view.open(80, 24)
            try:
                await Screen(view).until(b"2000\r\n", timeout=20)
            finally:
                await view.close()

        for _ in range(3):
            await asyncio.gather(*(visit(i * 0.01) for i in range(8)))
        assert not taps.tapped(roost.socket, pane) and cats(taps) == []

    asyncio.run(scenario())
    assert not piped(roost, pane)
    roost.wait_for(lambda: not pipers(tmp_path / "taps"), 5, "every pipe's sh and cat to exit")


VIEWER = """
import asyncio, sys
from pathlib import Path
from roost.pane.tmux.view import PaneView
from roost.pane.tmux.server import Server
from roost.pane.tmux.view import Taps

async def main():
    view = PaneView(Server(sys.argv[1]), sys.argv[2], taps=Taps(Path(sys.argv[3])))
    await view.open(80, 24)
    await view.next()
    print("ready", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def test_a_killed_daemons_pipe_ends_with_the_panes_next_writes(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start()
    directory = tmp_path / "taps"
    viewer = subprocess.Popen(
        [sys.executable, "-c", VIEWER, roost.socket, pane, str(directory)], stdout=subprocess.PIPE
    )
    try:
        assert viewer.stdout is not None and viewer.stdout.readline() == b"ready\n"
        roost.wait_for(lambda: pipers(directory) and piped(roost, pane), 5, "the tap's cat")
    finally:
        viewer.kill()
        viewer.wait()
    assert piped(roost, pane)  # nobody closed it
    # The first write after the kill reaches cat, which dies writing to a FIFO nobody reads;
    # tmux learns the pipe is gone when its next write fails, and closes it.
    roost.tmux("send-keys", "-t", pane, "echo after-$((6*7))", "Enter")
    roost.wait_screen(pane, "after-42")
    roost.tmux("send-keys", "-t", pane, "echo again-$((6*7))", "Enter")
    roost.wait_for(lambda: not piped(roost, pane), 5, "tmux to close the pipe whose cat died")
    roost.wait_for(lambda: not pipers(directory), 5, "the cat to exit")
    assert list(directory.iterdir())  # the killed viewer's FIFO is still there...
    Taps(directory).sweep()
    assert list(directory.iterdir()) == []  # ...until the next daemon sweeps it


def test_a_pipe_whose_reader_is_gone_leaves_nothing_waiting(roost: Roost, tmp_path: Path) -> None:
    """A daemon killed just after asking for a pipe: tmux's shell opens a FIFO nobody reads. It
    must not wait there for good: it goes when the pipe ends (here tmux closes it) or at the
    pane's next write."""
    pane = roost.start("sleep 600")  # writes nothing, so only the pipe's end can end its cat
    home = tmp_path / "taps" / "gone"
    home.mkdir(parents=True)
    os.mkfifo(home / "out", 0o600)
    roost.tmux("pipe-pane", "-O", "-t", pane, pipe_command(home / "out"))
    roost.wait_for(lambda: pipers(home), 5, "the pipe's shell")
    roost.tmux("pipe-pane", "-t", pane)
    roost.wait_for(lambda: not pipers(home), 5, "the pipe's shell to go")
