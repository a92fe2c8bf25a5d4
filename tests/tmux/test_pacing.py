"""Coalescing and reruns, on a real event loop with short intervals (no tmux needed)."""

from __future__ import annotations

import asyncio

from roost.tmux.pacing import Coalescer, Rerun
from tests.tmux.conftest import run


def test_first_mark_reports_at_once_then_once_per_interval() -> None:
    async def main() -> None:
        reports: list[tuple[str, bool, float]] = []
        loop = asyncio.get_running_loop()
        coalescer = Coalescer(0.1, lambda pane, resync: reports.append((pane, resync, loop.time())))
        start = loop.time()
        coalescer.mark("%1")
        assert [r[:2] for r in reports] == [("%1", False)]
        for _ in range(50):
            coalescer.mark("%1")
            coalescer.mark("%2")
        assert [r[:2] for r in reports] == [("%1", False), ("%2", False)]
        await asyncio.sleep(0.25)
        # Both were marked again inside their window: one trailing report each, no more.
        assert sorted(r[0] for r in reports[2:]) == ["%1", "%2"]
        assert all(r[2] - start >= 0.1 for r in reports[2:])
        await asyncio.sleep(0.2)
        assert len(reports) == 4

    run(main())


def test_resync_is_carried_to_the_next_report_and_forget_drops_it() -> None:
    async def main() -> None:
        reports: list[tuple[str, bool]] = []
        coalescer = Coalescer(0.05, lambda pane, resync: reports.append((pane, resync)))
        coalescer.mark("%1")
        coalescer.mark("%1", resync=True)
        await asyncio.sleep(0.1)
        assert reports == [("%1", False), ("%1", True)]
        coalescer.mark("%2")
        coalescer.mark("%2")
        coalescer.forget("%2")
        coalescer.mark("%3")
        coalescer.mark("%3")
        coalescer.close()
        await asyncio.sleep(0.1)
        assert reports == [("%1", False), ("%1", True), ("%2", False), ("%3", False)]

    run(main())


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
        await asyncio.sleep(0.01)
        stuck.cancel()
        await asyncio.wait_for(waiter, 5)

    run(main())
