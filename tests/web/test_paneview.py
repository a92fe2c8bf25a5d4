"""``PaneView`` on its own, against a real tmux server: what a viewer that falls behind gets."""

from __future__ import annotations

import asyncio

import pytest

from roost.pane.tmux.server import PaneGone, Server
from roost.pane.tmux.view import Bytes, Closed, PaneView, Reset, Size
from tests.conftest import Roost


async def drain(view: PaneView, until: bytes, timeout: float = 30) -> list[object]:
    """Frames until the output since the last Reset holds ``until``."""
    frames: list[object] = []
    seen = bytearray()

    async def read() -> None:
        while until not in seen:
            frame = await view.next()
            frames.append(frame)
            if isinstance(frame, Reset):
                seen[:] = frame.data
            elif isinstance(frame, Bytes):
                seen.extend(frame.data)
            elif isinstance(frame, Closed):
                raise AssertionError(frame.reason)

    await asyncio.wait_for(read(), timeout)
    return frames


def test_a_viewer_that_falls_behind_is_repainted_not_flooded(roost: Roost) -> None:
    pane = roost.start()

    async def scenario() -> list[object]:
        view = PaneView(Server(roost.socket), pane, backlog=20_000)
        await view.open(80, 24)
        try:
            await drain(view, b"#")
            await view.write(b"seq 1 50000; echo done-$((6*7))\r")
            # Nobody reads the view meanwhile; its client keeps reading tmux.
            await asyncio.to_thread(roost.wait_screen, pane, "done-42", 30)
            return await drain(view, b"done-42")
        finally:
            await view.close()

    frames = asyncio.run(scenario())
    resets = [frame for frame in frames if isinstance(frame, Reset)]
    assert resets, "a viewer past its backlog gets a fresh paint"
    assert sum(len(frame.data) for frame in frames if isinstance(frame, Bytes)) < 200_000


def test_opening_a_missing_pane_says_so(roost: Roost) -> None:
    roost.start()

    async def scenario() -> None:
        await PaneView(Server(roost.socket), "%4242").open()

    with pytest.raises(PaneGone, match="no pane %4242"):
        asyncio.run(scenario())


def test_a_pane_split_beside_it_is_a_size_change(roost: Roost) -> None:
    pane = roost.start()

    async def scenario() -> list[object]:
        view = PaneView(Server(roost.socket), pane)
        await view.open(100, 30)
        try:
            await drain(view, b"#")
            roost.tmux("split-window", "-h", "-d", "-t", pane, "sh")
            frame = await asyncio.wait_for(view.next(), 10)
            while not isinstance(frame, Size):
                frame = await asyncio.wait_for(view.next(), 10)
            return [frame]
        finally:
            await view.close()

    (size,) = asyncio.run(scenario())
    width = int(roost.tmux("display-message", "-p", "-t", pane, "#{pane_width}"))
    assert size == Size(width, 30) and width < 100
