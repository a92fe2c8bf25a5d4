"""A subscriber's queue: a reader waits at most its timeout, wakes at once for a push, a nudge
or a close, and a reader that goes away loses nothing that was pushed."""

from __future__ import annotations

import asyncio
import time

from roost.truth.roster.backlog import Backlog


class Numbers(Backlog[int]):
    def catch_up(self) -> tuple[int, ...]:
        return (-1,)


def test_a_reader_waits_its_timeout_and_no_more_then_reads_nothing() -> None:
    async def go() -> None:
        queue = Numbers(8)
        start = time.monotonic()
        assert await queue.next(0.2) == ()
        assert 0.15 <= time.monotonic() - start < 1.0

    asyncio.run(go())


def test_a_push_a_nudge_and_a_close_each_wake_a_waiting_reader_at_once() -> None:
    async def go() -> None:
        queue = Numbers(8)
        loop = asyncio.get_running_loop()
        for wake, expected in ((lambda: queue.push([1, 2]), (1, 2)), (queue.nudge, ()), (queue.close, None)):
            start = time.monotonic()
            loop.call_later(0.05, wake)
            assert await queue.next(30) == expected
            assert time.monotonic() - start < 5

    asyncio.run(go())


def test_what_was_pushed_while_no_one_waited_is_read_at_once_and_a_reader_that_went_away_loses_nothing() -> (
    None
):
    async def go() -> None:
        queue = Numbers(8)
        queue.push([1])
        assert await queue.next(30) == (1,)
        reader = asyncio.ensure_future(queue.next(30))
        await asyncio.sleep(0.01)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        queue.push([2])
        queue.nudge()  # no reader waits: nothing happens
        assert await queue.next(30) == (2,)

    asyncio.run(go())


def test_a_reader_too_far_behind_reads_its_owners_catch_up() -> None:
    async def go() -> None:
        queue = Numbers(2)
        queue.push([1, 2, 3])
        assert await queue.next(30) == (-1,)
        assert await queue.next(0.01) == ()

    asyncio.run(go())
