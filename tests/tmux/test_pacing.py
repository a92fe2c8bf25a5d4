"""Coalescing, on a clock the test steps by hand, and reruns, on a real event loop (no tmux needed)."""

from __future__ import annotations

import asyncio

from roost.pane.tmux.pacing import Coalescer, Rerun
from tests.fakes.clock import SteppedClock
from tests.tmux.conftest import run


def test_first_mark_reports_at_once_then_once_per_interval() -> None:
    clock = SteppedClock()
    reports: list[tuple[str, bool, float]] = []
    coalescer = Coalescer(0.1, lambda pane, resync: reports.append((pane, resync, clock.time())), clock)
    start = clock.time()
    coalescer.mark("%1")
    assert reports == [("%1", False, start)]
    for _ in range(50):
        coalescer.mark("%1")
        coalescer.mark("%2")
    assert reports == [("%1", False, start), ("%2", False, start)]
    assert coalescer.due("%1") and coalescer.due("%2")
    clock.advance(0.09)
    assert len(reports) == 2
    clock.advance(0.01)
    # Both were marked again inside their window: one trailing report each, at its end.
    assert reports[2:] == [("%1", False, start + 0.1), ("%2", False, start + 0.1)]
    clock.advance(1)
    assert len(reports) == 4 and clock.pending() == 0
    coalescer.mark("%1")  # a whole interval after the last report: at once again
    assert reports[4:] == [("%1", False, start + 1.1)]


def test_resync_is_carried_to_the_next_report_and_forget_drops_it() -> None:
    clock = SteppedClock()
    reports: list[tuple[str, bool]] = []
    coalescer = Coalescer(0.05, lambda pane, resync: reports.append((pane, resync)), clock)
    coalescer.mark("%1")
    coalescer.mark("%1", resync=True)
    clock.advance(0.05)
    assert reports == [("%1", False), ("%1", True)]
    coalescer.mark("%2")
    coalescer.mark("%2")
    coalescer.forget("%2")
    coalescer.mark("%3")
    coalescer.mark("%3")
    coalescer.close()
    clock.advance(1)
    assert reports == [("%1", False), ("%1", True), ("%2", False), ("%3", False)]
    assert clock.pending() == 0


def test_rerun_runs_once_more_when_asked_while_running() -> None:
    async def main() -> None:
        runs: list[int] = []
        gate = asyncio.Event()

        async def job() -> None:
            runs.append(len(runs))
            await gate.wait()

        rerun = Rerun(job)
        rerun.trigger()
        await asyncio.sleep(0)
        for _ in range(10):
            rerun.trigger()
        gate.set()
        await rerun.idle()
        assert runs == [0, 1]

    run(main())


def test_rerun_survives_a_failing_job_and_a_cancel_does_not_cancel_the_waiter() -> None:
    async def main() -> None:
        async def boom() -> None:
            raise RuntimeError("boom")

        failing = Rerun(boom)
        failing.trigger()
        await failing.idle()

        async def forever() -> None:
            await asyncio.Event().wait()

        stuck = Rerun(forever)
        stuck.trigger()
        waiter = asyncio.create_task(stuck.idle())
        await asyncio.sleep(0)  # the job and the waiter start
        stuck.cancel()
        await asyncio.wait_for(waiter, 5)

    run(main())
