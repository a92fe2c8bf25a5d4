"""The ACP SDK's load at a daemon's start, and background work that fails: one line each.

A thread's import can fail where it meets an import cycle the loop is in at that moment (the
daemon imports lazily on its loop while the SDK loads off it). That cannot be made to happen
on demand, so the failed thread import is stood in for here; the retry and the log are real.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from typing import Any

import pytest

from roost.headless.runner import rebuild, runner
from roost.headless.runner.rebuild import SDK, Rebuild


def bare() -> Rebuild:
    """A rebuild with nothing kept: ``connect`` then only loads the SDK."""
    return Rebuild(None, None, {}, lambda: 0.0, lambda work: None)  # type: ignore[arg-type]


def test_a_failed_load_off_the_loop_is_retried_on_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def fails(*_: Any) -> None:
        raise ImportError("cannot import name 'x' from partially initialized module")

    monkeypatch.setattr(rebuild.asyncio, "to_thread", fails)
    monkeypatch.delitem(sys.modules, SDK, raising=False)
    caplog.set_level(logging.WARNING, "rosterd")
    loading = bare()
    asyncio.run(loading.connect())
    assert loading.ready.is_set()
    assert SDK in sys.modules
    said = [r.getMessage() for r in caplog.records]
    assert said == ["headless: the ACP SDK failed to load off the loop (ImportError); loading it on the loop"]


def test_background_work_that_fails_is_one_line_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def work() -> None:
        raise RuntimeError("the text of this stays out of the log")

    async def main() -> None:
        task = asyncio.ensure_future(work())
        task.add_done_callback(runner._said_if_failed)
        await asyncio.sleep(0.01)

    caplog.set_level(logging.WARNING)
    asyncio.run(main())
    gc.collect()  # where asyncio would say "Task exception was never retrieved"
    said = [r.getMessage() for r in caplog.records]
    assert said == ["headless: background work failed: RuntimeError"]
